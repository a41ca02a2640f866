/** `@node-rs/bcrypt` in edge builds (no native addons): loading fails with this reason and bcryptjs hashes instead. */
export const unavailable = '@node-rs/bcrypt is not part of this build (no native addons on this platform)'
