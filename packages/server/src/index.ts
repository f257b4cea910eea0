export { createApp } from './app.ts';
export type { AppDeps } from './http/deps.ts';
export { startService, type RunningService, type ServiceOptions } from './service.ts';
export { loadConfig, type AppConfig } from './config.ts';
export { applyUpdate, type UpdateParams } from './domain/update.ts';
export { initialRecord, type EndpointRecord } from './domain/record.ts';
export type { EndpointStore } from './store/port.ts';
export { SqliteEndpointStore } from './store/sqlite/store.ts';
