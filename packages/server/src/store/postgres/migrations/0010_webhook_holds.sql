-- A webhook's pause, asked for by the webhook itself (its rate limit's window is used up): none of
-- its entries is claimed before `until`, including entries queued after the pause began, when the
-- queue was empty. One row per webhook, replaced by its next pause; the endpoint's ended pauses are
-- removed when one of its webhooks pauses again, and all of them with the endpoint.
CREATE TABLE webhook_holds (
  endpoint_id text COLLATE "C" NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  platform    text NOT NULL,
  url         text NOT NULL,
  until       bigint NOT NULL,
  PRIMARY KEY (endpoint_id, platform, url)
);
