import { randomBytes } from 'node:crypto'

/** A role-prefixed turn id such as `user-5f2c9a1b7e3d`. */
export function newTurnId(role: 'user' | 'assistant' | 'data'): string {
  return `${role}-${randomBytes(6).toString('hex')}`
}
