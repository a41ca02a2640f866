/**
 * Stands in for `@node-rs/bcrypt` in builds for edge runtimes (Cloudflare Workers), where native
 * addons cannot load: the module's Nitro config aliases the package to this file there, so the
 * bundler never tries to pack the addon. Loading it fails with this reason (see
 * `loadNativeBcrypt`), and bcryptjs hashes instead.
 */
export const unavailable = '@node-rs/bcrypt is not part of this build (no native addons on this platform)'
