import { builtInBackground } from '../support/background-build'

// Before every e2e file (`setupFiles`): the fixtures build beside the unit tests (test/e2e/global-setup.ts);
// a file starts once they are built, and a failed build fails it with the build's output.
await builtInBackground()
