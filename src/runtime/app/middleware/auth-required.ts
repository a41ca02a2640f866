import { defineNuxtRouteMiddleware, useNuxtApp } from '#imports'
import { guardRoute } from '../state'

/** Named route middleware `auth`: protected page (visitors without a session go to `clientMiddleware.redirectTo`). */
export default defineNuxtRouteMiddleware(to => guardRoute(useNuxtApp(), to, 'auth'))
