/**
 * Unit specs of the labextension (`jlpm test`, run by `make labext-specs`):
 * the modules that touch neither the page nor a kernel (the flows metadata
 * reader, the CSP checks, the once-per-kind failure dialogs with
 * @jupyterlab/apputils mocked), in Node, compiled and type-checked by ts-jest
 * with tsconfig.spec.json.
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }]
  }
};
