/**
 * Credentials an organization stores for its carrier account: what a carrier's Calls client and signature
 * checks need. Here in the core so the store can hand them out and sessions pass them on without either
 * depending on `carrier/`; `carrier/carrier.ts` exports the same type to carriers.
 */
export interface CarrierCredentials {
  readonly accountSid: string
  /** Secret: signs the carrier's webhooks and authenticates its REST API. */
  readonly authToken: string
  /** Carrier REST base URL (no trailing slash needed); undefined means the carrier's own default. */
  readonly apiBaseUrl?: string | undefined
}
