import { defineNuxtRouteMiddleware, useNuxtApp } from '#imports'
import { guardRoute } from '../state'

/** Global route middleware: applies `definePageMeta({ auth })` and, with `clientMiddleware.global`, protects every non-public page. */
export default defineNuxtRouteMiddleware(to => guardRoute(useNuxtApp(), to))
