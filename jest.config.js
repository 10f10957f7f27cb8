// One jest run over every workspace. Tests are TypeScript, transpiled per file by ts-jest
// (type checking is `tsc -b`'s job); workspace imports (@mailer/*) resolve to the built dist/,
// which `npm test` builds first, so tests exercise exactly what the processes run.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/proto', '<rootDir>/packages', '<rootDir>/services', '<rootDir>/gateway', '<rootDir>/charts', '<rootDir>/test'],
  testMatch: ['**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: { module: 'commonjs', target: 'ES2022', esModuleInterop: true, isolatedModules: true } }] },
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/scripts/jest-summary-reporter.js'],
};
