declare module 'node:test' {
  type Body = () => void | Promise<void>;
  interface Options {
    skip?: boolean | string;
    todo?: boolean | string;
  }
  interface TestFn {
    (name: string, fn: Body): void;
    (name: string, options: Options, fn: Body): void;
    skip(name: string, fn?: Body): void;
    todo(name: string, fn?: Body): void;
  }
  const test: TestFn;
  export const it: TestFn;
  export function describe(name: string, fn: () => void): void;
  export default test;
}

declare module 'node:assert' {
  const assert: {
    strictEqual(actual: unknown, expected: unknown, message?: string): void;
    rejects(block: Promise<unknown>, message?: string): Promise<void>;
    fail(message?: string): never;
  };
  export default assert;
}
