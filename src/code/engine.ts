// The QuickJS engine a run gets: the WebAssembly module is compiled once per process, and each run
// instantiates it afresh with its own capped `WebAssembly.Memory`, so one run's heap can neither
// reach nor starve another's, and dropping the run drops everything it made.

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type CustomizeVariantOptions,
  type QuickJSContext,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
} from 'quickjs-emscripten-core';
import releaseSyncImport from '@jitl/quickjs-wasmfile-release-sync';

// TypeScript reads the package's one declaration file as CommonJS; Node loads its ES module, whose
// default export is the variant itself.
const releaseSync = releaseSyncImport as unknown as QuickJSSyncVariant;

// The WebAssembly API as this file uses it (the project's type libraries do not declare it).
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmModule {
  readonly [wasmModuleBrand]: never;
}
declare const wasmModuleBrand: unique symbol;
interface WasmInstance {
  readonly exports: Record<string, unknown>;
}
interface WasmApi {
  compile(bytes: Uint8Array): Promise<WasmModule>;
  Instance: new (module: WasmModule, imports: unknown) => WasmInstance;
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
  RuntimeError: new () => Error;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const PAGE = 64 * 1024;
/** The build's own minimum (its memory import asks for 16 MiB); a smaller memory fails to link. */
const ENGINE_PAGES = 256;
/**
 * What the engine needs besides the program's heap: its static data and C stack live in the first
 * 16 MiB. The WebAssembly memory is capped at the heap limit plus this, so QuickJS's own limit (a
 * catchable "out of memory") usually comes first and the hard cap stops what its count misses
 * (the allocator's overhead on many small blocks).
 */
const ENGINE_OVERHEAD_BYTES = ENGINE_PAGES * PAGE;
/**
 * QuickJS's stack limit. The engine's frames run on the host thread's own stack, so this must stop
 * a deep recursion well before Node's stack ends (measured: ~1,500 plain frames).
 */
const STACK_BYTES = 256 * 1024;

let compiled: Promise<WasmModule> | undefined;

/** Emscripten's own output hooks (not in the loader's declared options, but read by its module). */
const QUIET = { print: (): void => undefined, printErr: (): void => undefined };

/** The engine's WebAssembly module, compiled on first use and shared by every run after. */
function engineModule(): Promise<WasmModule> {
  compiled ??= (async () => {
    const path = createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm');
    return wasm.compile(await readFile(path));
  })();
  compiled.catch(() => {
    compiled = undefined;
  });
  return compiled;
}

export interface Engine {
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  memory: WasmMemory;
}

/** Whether `err` is the engine's instance failing (an abort or a trap), not an error of the program's. */
export function isEngineTrap(err: unknown): boolean {
  return err instanceof wasm.RuntimeError;
}

/**
 * A fresh engine whose heap may use `heapBytes`: its own module instance and memory. Nothing of
 * the host is reachable from it until the caller adds functions to it.
 */
export async function newEngine(heapBytes: number): Promise<Engine> {
  const wasmModule = await engineModule();
  const maximum = Math.max(ENGINE_PAGES, Math.ceil((heapBytes + ENGINE_OVERHEAD_BYTES) / PAGE));
  const memory = new wasm.Memory({ initial: ENGINE_PAGES, maximum });
  const emscriptenModule = {
    // The engine prints only when it aborts (a broken instance, which the run then drops): keep
    // that off the gateway's stdout, which may be an agent's stdio channel.
    ...QUIET,
    // The module compiled once, instantiated at once (with this run's memory among its imports):
    // no wait on an asynchronous instantiation's task.
    instantiateWasm: (imports: unknown, onSuccess: (instance: WasmInstance, module: WasmModule) => void) => {
      const instance = new wasm.Instance(wasmModule, imports);
      onSuccess(instance, wasmModule);
      return instance.exports;
    },
  } as unknown as CustomizeVariantOptions['emscriptenModule'];
  const quickjs = await newQuickJSWASMModuleFromVariant(newVariant(releaseSync, { wasmMemory: memory, emscriptenModule }));
  const runtime = quickjs.newRuntime();
  runtime.setMemoryLimit(heapBytes);
  runtime.setMaxStackSize(STACK_BYTES);
  const context = runtime.newContext();
  return { runtime, context, memory };
}
