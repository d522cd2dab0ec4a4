/**
 * Which service a command talks to (docs/cli.md §1 "Where the service is"): the one configured by
 * `--base-url` / `TTS_BASE_URL` with `TTS_API_KEY` or `--api-key-file`, or — with none configured,
 * or `--offline` — the embedded built-in service.
 */
import type { Duplex } from 'node:stream';
import type { LingeringConnection } from '../client/realtime.js';
import { safeOrigin } from '../client/safe-origin.js';
import { assertSecureTransport } from '../client/auth.js';
import { endpointUrl } from '../client/sse.js';
import { stat } from 'node:fs/promises';
import { fileProblem, TtsError } from '../errors.js';
import { readFirstLine } from '../text/read.js';
import type { EarlyEngine } from '../server/embedded-engine.js';
import { discardEarlyWorker } from '../engine/early-worker.js';

/** Where requests go and the key they carry. */
export interface ServiceTarget {
  baseUrl: string;
  /** WebSocket base as configured, else the HTTP base: the realtime client reads `http(s)` as `ws(s)`. */
  wsBaseUrl: string;
  /**
   * The setting that gave {@link baseUrl}, as hints name it: `--base-url`, `TTS_BASE_URL`, or the
   * config file's line (`base-url in [profile.work] (PATH:3)`, {@link ServiceChoice.baseUrlFrom});
   * undefined for the embedded service, which no setting chose.
   */
  baseUrlSource?: string | undefined;
  /** The same for {@link wsBaseUrl}: `--ws-base-url`, `TTS_WS_BASE_URL`, its config line, or {@link baseUrlSource}. */
  wsBaseUrlSource?: string | undefined;
  apiKey: string;
  /** True for the in-process built-in service. */
  embedded: boolean;
  /**
   * The embedded service's in-memory connection (server/embedded.ts), which SSE requests take
   * instead of TCP; absent for a remote service.
   */
  connect?: (() => Duplex) | undefined;
  /**
   * Ends what the run leaves: the WebSocket connections still in {@link lingering}, then the
   * embedded service (nothing more for a remote one).
   */
  close(): Promise<void>;
  /**
   * WebSocket sessions whose audio is complete and whose closing handshake is under way
   * (client/realtime.ts `lingering`): {@link close} destroys those the service has not answered
   * by then — the run is over, and a silent service must not hold the process (RFC 6455 §7.1.1).
   */
  lingering?: Set<LingeringConnection>;
  /**
   * Learnt of this service while the process runs: it refused a request that carried
   * `word_timings` (docs/protocol.md §2.1), so no later request through this target sends the
   * field — a later piece's, or a later batch job's (channels.ts askingForWords).
   */
  refusedWordTimings?: boolean;
}

/** The flags and environment that choose the service. */
export interface ServiceChoice {
  baseUrl: string | undefined;
  wsBaseUrl: string | undefined;
  /**
   * Where `baseUrl` came from when the config file set it (config.ts applyConfig: `base-url in
   * [profile.work] (PATH:3)`); undefined = the `--base-url` flag.
   */
  baseUrlFrom?: string | undefined;
  /** The same for `wsBaseUrl`; undefined = the `--ws-base-url` flag. */
  wsBaseUrlFrom?: string | undefined;
  apiKeyFile: string | undefined;
  offline: boolean;
  env: NodeJS.ProcessEnv;
  /** Prints a warning line on stderr (not with -q). */
  warn: (line: string) => void;
  /** The text about to be spoken, when known: lets the embedded engine prepare for it. */
  text?: string | undefined;
  /** An engine started for this run ahead of its service (issue 20): the embedded service takes it. */
  early?: EarlyEngine | undefined;
  /** Stops reading the key file (Ctrl-C while a FIFO there waits for its writer). */
  signal?: AbortSignal | undefined;
  /**
   * The run times words (`--words`, `--word-timings`): with a remote service its aligner may render
   * references with the built-in engine (docs/cli.md §12.1), whose pool takes the engine thread
   * bin/tts.js started (engine/early-worker.ts). Otherwise a remote service's run stops that thread.
   */
  timesWords?: boolean | undefined;
}

/**
 * Whether these flags and this environment choose the embedded built-in service: `--offline`, or
 * no service configured (`--base-url`, or the config file's `base-url`, both in `baseUrl`;
 * `TTS_BASE_URL`). The one rule, for {@link resolveService} and the early engine start.
 */
export function embeddedServiceChosen(choice: Pick<ServiceChoice, 'baseUrl' | 'offline' | 'env'>): boolean {
  return choice.offline || configuredBaseUrl(choice) === undefined;
}

/** The service's base URL: `--base-url` (or the config file's, in `baseUrl`) over `TTS_BASE_URL`; undefined for none. */
function configuredBaseUrl(choice: Pick<ServiceChoice, 'baseUrl' | 'env'>): string | undefined {
  return nonEmpty(choice.baseUrl) ?? nonEmpty(choice.env['TTS_BASE_URL']);
}

/**
 * Resolves the service, starting the embedded one if needed.
 * @throws TtsError `no_api_key` (exit 3) when a service is configured without a key; `usage`
 *   (exit 2) when the key file cannot be read, or the base URL does not parse or is not http(s).
 */
export async function resolveService(choice: ServiceChoice): Promise<ServiceTarget> {
  const baseUrl = configuredBaseUrl(choice);
  // embeddedServiceChosen(choice), with `baseUrl` narrowed for what follows.
  if (choice.offline || baseUrl === undefined) {
    const { startEmbeddedService } = await import('../server/embedded.js');
    const svc = await startEmbeddedService({ text: choice.text, engine: choice.early?.take() });
    return { baseUrl: svc.baseUrl, wsBaseUrl: svc.baseUrl, apiKey: svc.apiKey, embedded: true, connect: () => svc.connect(), ...cuttingLingering(() => svc.close()) };
  }
  // A remote service: the engine thread bin/tts.js may have started is not needed (issue 20),
  // unless the aligner may need the built-in engine for the words.
  if (choice.timesWords !== true) discardEarlyWorker();
  // A base URL that is no URL (or not http/https) is a bad value, exit 2 (docs/cli.md §3), whether a
  // key is given or not: checked before the key, as the request would check it.
  assertSecureTransport(endpointUrl(baseUrl, ''), true);
  const apiKey = choice.apiKeyFile !== undefined ? await readKeyFile(choice.apiKeyFile, choice.warn, choice.signal) : nonEmpty(choice.env['TTS_API_KEY']);
  if (apiKey === undefined) {
    throw new TtsError('no_api_key', `a service is configured (${safeOrigin(baseUrl)}), but no API key was given for it`, {
      hint: 'set TTS_API_KEY, or use --api-key-file PATH (or --offline for the built-in engine)',
    });
  }
  // A key file's key was checked as it was read.
  if (choice.apiKeyFile === undefined) assertSendableKey(apiKey, 'the API key in TTS_API_KEY');
  const ws = nonEmpty(choice.wsBaseUrl) ?? nonEmpty(choice.env['TTS_WS_BASE_URL']) ?? baseUrl;
  // configuredBaseUrl's order: the flag (or the config file's line) over the environment.
  const baseUrlSource = nonEmpty(choice.baseUrl) !== undefined ? (choice.baseUrlFrom ?? '--base-url') : 'TTS_BASE_URL';
  const wsBaseUrlSource =
    nonEmpty(choice.wsBaseUrl) !== undefined ? (choice.wsBaseUrlFrom ?? '--ws-base-url') : nonEmpty(choice.env['TTS_WS_BASE_URL']) !== undefined ? 'TTS_WS_BASE_URL' : baseUrlSource;
  return { baseUrl, wsBaseUrl: ws, baseUrlSource, wsBaseUrlSource, apiKey, embedded: false, ...cuttingLingering(async () => {}) };
}

/** A target's {@link ServiceTarget.lingering} and a `close` that terminates them before `closeService`. */
function cuttingLingering(closeService: () => Promise<void>): Pick<ServiceTarget, 'lingering' | 'close'> {
  const lingering = new Set<LingeringConnection>();
  return {
    lingering,
    close: async () => {
      for (const connection of lingering) connection.terminate();
      lingering.clear();
      await closeService();
    },
  };
}


/**
 * Characters an HTTP field value cannot hold (RFC 9110 §5.5: controls other than tab, and
 * anything beyond one byte), which Node and undici refuse to send.
 */
const NOT_IN_A_HEADER = /[^\t\x20-\x7e\x80-\xff]/u;

/**
 * Refuses a key that cannot travel in `Authorization: Bearer` (a control character, a character
 * beyond Latin-1): sending it would fail in the HTTP library, which reads as a network error and
 * is retried. Never shows the key, only where it came from and the character's position.
 * @param source how messages name the key (`the API key in TTS_API_KEY`, `the API key in PATH`).
 * @throws TtsError `usage` (exit 2).
 */
export function assertSendableKey(apiKey: string, source: string): void {
  const bad = NOT_IN_A_HEADER.exec(apiKey);
  if (bad === null) return;
  const at = [...apiKey.slice(0, bad.index)].length + 1;
  throw new TtsError('usage', `${source} holds a character that cannot be sent in an HTTP header (U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}, character ${at})`, {
    hint: 'check the key: a stray control character or a pasted symbol',
  });
}

/** Longest first line of a key file, in bytes: a key is far shorter. */
const MAX_KEY_LINE_BYTES = 64 * 1024;

/**
 * Reads a key file: its first line, trimmed, and nothing after it (a FIFO or a device such as
 * /dev/zero is read only that far, and Ctrl-C stops the wait for a FIFO's writer). Warns, as ssh
 * does for private keys, when group or others may read it.
 * @throws TtsError `usage` (exit 2) when it cannot be read, is not UTF-8 text, its first line
 *   is over 64 KiB or holds a character no HTTP header can carry ({@link assertSendableKey}); `no_api_key` (exit 3) when its first line is empty; `signal.reason` on abort.
 */
export async function readKeyFile(path: string, warn: (line: string) => void, signal: AbortSignal = new AbortController().signal): Promise<string> {
  try {
    const info = await stat(path);
    if ((info.mode & 0o077) !== 0) {
      warn(`warning: ${path} is readable by others (mode ${(info.mode & 0o777).toString(8)}); chmod 600 ${path}`);
    }
  } catch (cause) {
    throw new TtsError('usage', `cannot read the API key file ${path}: ${fileProblem(cause)}`, { cause });
  }
  const key = (await readFirstLine(path, `the API key file ${path}`, MAX_KEY_LINE_BYTES, signal)).trim();
  if (key === '') throw new TtsError('no_api_key', `the API key file ${path} is empty`, { hint: 'put the key on its first line' });
  assertSendableKey(key, `the API key in ${path}`);
  return key;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}
