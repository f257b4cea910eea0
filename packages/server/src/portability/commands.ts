// The CLI's `export` and `import` subcommands (moving a store, migrating from the original service).
import type { Command } from 'commander';
import { withStore } from '../cliStore.ts';
import type { AppConfig } from '../config.ts';
import type { EndpointStore } from '../store/port.ts';
import { exportStore, importFile } from './exportImport.ts';
import { OriginalLayoutError, importFromOriginal } from './fromOriginal.ts';
import { fileSink, stdoutSink } from './output.ts';

/**
 * The spec's schemas, loaded by the imports alone, which check values against them: Ajv and the
 * spec's YAML are a quarter of a CLI start-up's CPU, which every other command is spared.
 */
const specSchemas = async () => (await import('./specSchemas.ts')).loadSpecSchemas();

/** Exit code of an import from the original that imported the rest but refused some values or endpoints. */
export const EXIT_SOME_REFUSED = 2;

export function addPortabilityCommands(program: Command): void {
  program
    .command('export')
    .description('write the whole store as JSON lines (docs/export-format.md) to a file, or to standard output')
    .argument('[file]', 'where to write (written beside it first, then renamed; readable by its owner only)')
    .action((file: string | undefined) =>
      withStore((store) =>
        orFileProblem(async () => {
          const counts = await exportStore(store, file === undefined ? stdoutSink() : await fileSink(file), new Date());
          console.error(`exported ${counts.endpoint} endpoints and ${counts.bot} bots${file === undefined ? '' : ` to ${file}`}`);
          return 0;
        }, 'Nothing was exported.'),
      ),
    );

  program
    .command('import')
    .description("read an export file into the store (all of it or nothing), or, with --from-original, the original service's files")
    .argument('[file]', 'an export file written by `chatbridge export`')
    .option('--from-original <folder>', 'a folder of the original service: <id>.json records and tokens.json')
    .action((file: string | undefined, opts: { fromOriginal?: string }) => {
      if ((file === undefined) === (opts.fromOriginal === undefined)) {
        console.error('Give either an export file or --from-original <folder>.');
        process.exitCode = 1;
        return;
      }
      return withStore((store, { config }) =>
        orFileProblem(() => (file !== undefined ? runImport(store, file) : runImportFromOriginal(store, opts.fromOriginal!, config))),
      );
    });
}

/** A file that cannot be read (or written) is named with the reason, without a stack trace. */
async function orFileProblem(work: () => Promise<number>, outcome = 'Nothing was imported.'): Promise<number> {
  try {
    return await work();
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (!(error instanceof OriginalLayoutError) && (typeof e?.code !== 'string' || e.path === undefined)) throw error;
    console.error(error instanceof OriginalLayoutError ? e.message : `${e.path}: ${e.code}`);
    console.error(outcome);
    return 1;
  }
}

async function runImport(store: EndpointStore, file: string): Promise<number> {
  const report = await importFile(store, file, await specSchemas());
  if (report.ok) {
    const bots = report.bots && `; bots: ${report.bots.imported} imported, ${report.bots.unchanged} unchanged`;
    console.log(`${report.imported} imported, ${report.unchanged} unchanged${bots ?? ''}`);
    return 0;
  }
  for (const issue of report.issues)
    console.error(`line ${issue.line}${issue.id === undefined ? '' : ` (endpoint ${issue.id})`}: ${issue.problem}`);
  if (report.moreIssues > 0) console.error(`... and ${report.moreIssues} more lines with problems`);
  for (const id of report.conflicts)
    console.error(`conflict: endpoint ${id} exists in this store with another token, record, message state or version`);
  for (const id of report.botConflicts)
    console.error(`conflict: bot ${id} exists in this store with another platform or key, or its key digest is another bot's`);
  console.error('Nothing was imported.');
  return 1;
}

async function runImportFromOriginal(store: EndpointStore, folder: string, config: AppConfig): Promise<number> {
  const report = await importFromOriginal(store, folder, {
    policy: { allowPrivateWebhooks: config.allowPrivateWebhooks },
    schemas: await specSchemas(),
    onRefusal: (id, what, reason) => console.log(`refused ${id}: ${what}: ${reason}`),
  });
  if (report.conflicts.length > 0) {
    for (const id of report.conflicts) console.error(`conflict: endpoint ${id} was created in this store while the import ran`);
    console.error('Nothing was imported.');
    return 1;
  }
  const refusedEndpoints = report.refusedEndpoints.length;
  const refusedValues = report.refusedValues.length;
  console.log(
    `${report.imported} imported, ${report.unchanged} unchanged, ${refusedEndpoints} endpoints refused, ${refusedValues} values refused`,
  );
  return refusedEndpoints + refusedValues > 0 ? EXIT_SOME_REFUSED : 0;
}
