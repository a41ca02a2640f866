// Writes the options table of docs/options.md from the options schema (src/build/options-table.ts).
import { readFileSync, writeFileSync } from 'node:fs'
import { createJiti } from 'jiti'

const jiti = createJiti(import.meta.url)
const { withOptionsTable } = await jiti.import('../src/build/options-table.ts')
const file = new URL('../docs/options.md', import.meta.url)
writeFileSync(file, withOptionsTable(readFileSync(file, 'utf8')))
