// One button's request: busy while it runs, the refusal's message (and code) when it fails.
export function useAction() {
  const busy = ref(false)
  const failure = ref('')
  const { errorOf } = useOrganizations()

  async function run(action: () => Promise<unknown>): Promise<boolean> {
    busy.value = true
    failure.value = ''
    try {
      await action()
      return true
    }
    catch (error) {
      const { error: code, message } = errorOf(error)
      failure.value = `${message} (${code})`
      return false
    }
    finally {
      busy.value = false
    }
  }

  return { busy, failure, run }
}
