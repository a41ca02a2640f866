import { defineNuxtRouteMiddleware, useNuxtApp } from '#imports'
import { guardRoute } from '../state'

/**
 * Global route middleware of the module: applies `definePageMeta({ auth })` (the values of route
 * rules plus 'guest': true | 'required' | 'protected', false | 'public' | 'skip', 'guest') and,
 * with `clientMiddleware.global`, protects every page that is not public.
 */
export default defineNuxtRouteMiddleware(to => guardRoute(useNuxtApp(), to))
