export default defineNitroPlugin(() => {
  defineAuthHandlers({
    customClaims: user => ({ role: typeof user.role === 'string' ? user.role : 'user' }),
  })
})
