/** `https://host` -> `wss://host`, `http://` -> `ws://`; ws(s) URLs pass through; no trailing slash. */
export function webSocketBase(url: string): string {
  return url.replace(/^http(s?):\/\//i, 'ws$1://').replace(/\/+$/, '')
}

/** A query string from ordered pairs, encoded with encodeURIComponent (spaces as %20, repeated keys kept). */
export function queryString(pairs: ReadonlyArray<readonly [string, string | number | boolean]>): string {
  return pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`).join('&')
}
