// What a bot key is shown in place of another platform's webhook URL (the server's
// domain/redaction.ts; the `botKey` security scheme of the spec says so).

/** Stands in for each webhook URL of another platform in every record a bot key is shown. */
export const REDACTED_WEBHOOK = 'https://redacted.invalid/webhook-of-another-platform';

/** Whether `url`, read from a record with a bot key, is another platform's webhook hidden from it. */
export const isRedactedWebhook = (url: string): boolean => url === REDACTED_WEBHOOK;
