/**
 * What RTP_PORT_MIN..RTP_PORT_MAX gives: RTP takes an even port and RTCP the odd one above it (RFC 3550 section
 * 11), so a range is narrowed to the pairs inside it. An odd bound (19999, a common setting) is said once at start
 * rather than refused. The same rule as the pool's (transports/sip/media/rtp-port-pool.ts), which the wiring may not
 * import here.
 */

/** The narrowing of `min..max`: a warning for an odd bound, or why no pair fits. */
export function rtpPortRangeCheck(min: number, max: number): { error?: string; warning?: string } {
  const first = min + (min % 2)
  const last = max % 2 === 1 ? max - 1 : max - 2
  if (last < first) return { error: `leaves no even port with its odd neighbour above RTP_PORT_MIN (${min})` }
  if (min % 2 === 0 && max % 2 === 0) return {}
  return {
    warning: `RTP_PORT_MIN..RTP_PORT_MAX (${min}..${max}) has an odd bound: RTP uses the even ports ${first}..${last}, RTCP the odd port above each`,
  }
}
