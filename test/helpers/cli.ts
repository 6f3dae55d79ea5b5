/** How tests run the `parley` command: from the TypeScript sources (the built one is tested in test/cli). */
export const PARLEY = ['--import', 'tsx', 'src/cli.ts'];
