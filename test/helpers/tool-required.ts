/**
 * The one rule for test files that need a tool the machine may lack (sipp, Chromium, nginx, Kamailio, baresip, the
 * PostgreSQL binaries): skip where it is missing, but under CI, which installs every one of them (.ci/run), a missing
 * tool fails the file instead of passing it unseen.
 */
import t from 'tap'

/**
 * `{ skip }` for a test that needs a tool: false when it is there (`missing` false or undefined), else the reason;
 * under CI the reason also fails the file.
 */
export function toolSkip(missing: string | false | undefined): string | false {
  if (missing === false || missing === undefined) return false
  if (process.env.CI) t.fail(`${missing}: CI installs it, so a missing one fails the file`)
  return missing
}
