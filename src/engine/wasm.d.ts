/**
 * The few WebAssembly JavaScript API members flite.ts uses (https://webassembly.github.io/spec/js-api/).
 * The project compiles without the DOM library, where TypeScript declares them, and @types/node
 * does not; these match the standard's shapes.
 */
declare namespace WebAssembly {
  /** A compiled module: instantiate it any number of times. */
  class Module {
    /** Compiles synchronously (tests only: the engine uses {@link compile}). */
    constructor(bytes: ArrayBufferView | ArrayBuffer);
    /** The module's exports: name and kind (`function`, `memory`, ...). */
    static exports(module: Module): { name: string; kind: string }[];
    /** The module's imports: module, name and kind. */
    static imports(module: Module): { module: string; name: string; kind: string }[];
    private readonly brand: 'WebAssembly.Module';
  }
  /** An instantiated module with its exports. */
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
  /** Compiles WebAssembly bytes (off the calling thread where the engine can). */
  function compile(bytes: ArrayBufferView | ArrayBuffer): Promise<Module>;
}
