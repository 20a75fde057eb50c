/** What webhook creation and delivery need to know, from the configuration. */
export interface WebhookSettings {
  /** 32 bytes: the AES-256-GCM key of custom header values and signing secrets at rest. */
  readonly encryptionKey: Uint8Array
  /**
   * Development and tests only: plain http to loopback, and loopback targets at all (over http or
   * https). Private, link-local, multicast and metadata addresses stay refused.
   */
  readonly allowLoopback: boolean
  /** Extra trusted certificate authorities (PEM) for deliveries, e.g. a test receiver's self-signed one. */
  readonly ca?: string | undefined
  /**
   * Tests only: the delay in ms before each attempt of a delivery (the first is not waited for), in place
   * of the production schedule; its length is the number of attempts.
   */
  readonly retrySchedule?: ReadonlyArray<number> | undefined
}
