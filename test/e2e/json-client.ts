import { expect } from 'vitest'
import { CookieJar } from '../helpers/cookie-jar'
import type { Server } from './requests'

/** One HTTP client of a server with its own cookie jar (a browser calling the JSON endpoints). */
export function jsonClient(server: Pick<Server, 'fetch'>) {
  const jar = new CookieJar()
  const request = async (method: string, path: string, { body, bearer }: { body?: unknown, bearer?: string } = {}) => {
    const headers: Record<string, string> = { accept: 'application/json', cookie: jar.header() }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (bearer) headers.authorization = `Bearer ${bearer}`
    const res = await server.fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    jar.store(res)
    return res
  }
  return {
    get: (path: string, bearer?: string) => request('GET', path, { bearer }),
    post: (path: string, body: unknown = {}, bearer?: string) => request('POST', path, { body, bearer }),
  }
}

export type JsonClient = ReturnType<typeof jsonClient>

/** The JSON body of `res`, after checking its status (the body is shown when it differs). */
export async function ok<T>(res: Response, status = 200): Promise<T> {
  const text = await res.text()
  expect(res.status, text).toBe(status)
  return (text ? JSON.parse(text) : undefined) as T
}
