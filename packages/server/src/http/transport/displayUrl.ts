/**
 * The base URL to show an operator for a listening address: a wildcard address becomes the loopback
 * address of its family (what a curl on the same machine can reach), an IPv6 literal gets brackets,
 * and port 0 (a port picked at start, unknown to the CLI) shows as `<port>`.
 */
export function displayUrl(host: string, port: number): string {
  const shownHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${shownHost}:${port === 0 ? '<port>' : port}`;
}
