/** What the admin page's endpoints answer (`<authPath>/audit/users/**`), for the server and the page alike. */
import type { AuthSession } from '../types/auth'

/** A user the search found. */
export interface AuditAdminUser {
  /** The user's `sub`. */
  id: string
  /** The address the host's password `findUser` answered for. */
  email?: string
  /** Live sessions of the user. */
  sessions: number
}

/** A session as the admin page lists it: impersonations of the user carry `impersonatedBy`. */
export type AuditAdminSession = AuthSession
