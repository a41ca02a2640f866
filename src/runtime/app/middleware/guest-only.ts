import { defineNuxtRouteMiddleware, useNuxtApp } from '#imports'
import { guardRoute } from '../state'

/** Named route middleware `guest`: logged-out-only page (users with a session go to `clientMiddleware.loggedOutRedirectTo`). */
export default defineNuxtRouteMiddleware(to => guardRoute(useNuxtApp(), to, 'guest'))
