/**
 * `k6/x/tokenstorm`: streaming LLM clients with per-token timing for k6-style scripts,
 * an embedded mock LLM server, JSONL datasets and output-length samplers.
 *
 * Every request made through a {@link Client} emits these metrics automatically
 * (k6 names; use them in `thresholds`):
 *
 * | metric | type | meaning |
 * |---|---|---|
 * | `llm_reqs` | Counter | requests finished, any outcome |
 * | `llm_req_failed` | Rate | request failed (transport, HTTP status, stream error, timeout) |
 * | `llm_ttfb` | Trend (time) | start → response headers |
 * | `llm_ttft` | Trend (time) | start → first chunk of generated text, reasoning included |
 * | `llm_ttfo` | Trend (time) | start → first chunk of the answer proper, after any reasoning |
 * | `llm_itl` | Trend (time) | each gap between consecutive content chunks |
 * | `llm_tpot` | Trend (time) | (e2e − ttft) / (completion_tokens − 1) |
 * | `llm_e2e` | Trend (time) | start → last content chunk |
 * | `llm_req_duration` | Trend (time) | start → stream closed |
 * | `llm_prompt_tokens`, `llm_completion_tokens` | Counter | tokens per request |
 * | `llm_output_tps` | Trend | per-request decode rate, tokens/s |
 * | `llm_goodput` | Rate | the request met every SLO set on it (only when an SLO is set) |
 * | `data_sent`, `data_received` | Counter (data) | request / response bytes |
 *
 * Samples are tagged `model`, `dialect`, `status`, `finish_reason`, `error_type`, plus the
 * client's and the call's `tags` and the VU's tags (scenario, group, …).
 *
 * Requests are not allowed in the init context (as in k6). A request that fails because
 * the iteration or the test is being stopped emits no metrics.
 *
 * @example
 * ```js
 * import storm from 'k6/x/tokenstorm';
 * import { check } from 'k6';
 *
 * export const options = {
 *   vus: 2, duration: '5s',
 *   thresholds: { llm_ttft: ['p(95)<500'], llm_req_failed: ['rate<0.01'] },
 * };
 *
 * const client = new storm.Client({ model: 'mock-model' }); // no url: the embedded mock
 *
 * export default function () {
 *   const r = client.chat({ messages: [{ role: 'user', content: 'Hello' }], max_tokens: 32 });
 *   check(r, { 'ok': (r) => r.ok, 'fast first token': (r) => r.ttft_ms < 500 });
 * }
 * ```
 *
 * @module k6/x/tokenstorm
 */

/** A duration: a string such as `"30s"`, `"500ms"`, `"1m30s"`, or a number of milliseconds. */
export type Duration = string | number;

/** The wire protocol a {@link Client} speaks. */
export type Dialect = 'openai-chat' | 'openai-completions' | 'anthropic' | 'tgi' | 'ollama';

/** Why a request failed; the `error_type` tag. Empty when it succeeded. */
export type ErrorType =
  | ''
  | 'network'
  | 'timeout'
  | 'http_4xx'
  | 'http_5xx'
  | 'rate_limited'
  | 'stream'
  | 'decode'
  | 'truncated';

/** Service-level objectives. A request meets them when it succeeded and every set limit holds. */
export interface SLO {
  /** Time to first token at most this. */
  ttft?: Duration;
  /** Time per output token at most this (met when the answer has a single token). */
  tpot?: Duration;
  /** Start to last token at most this. */
  e2e?: Duration;
}

/** Options of `new Client(...)`. Unknown options are an error, naming the option. */
export interface ClientOptions {
  /**
   * Base URL. OpenAI-compatible servers and Anthropic: the `/v1` root
   * (`http://127.0.0.1:8000/v1`); TGI and Ollama: the server root. Only 127.0.0.1 in CI.
   * When absent the client uses the embedded mock (see {@link mock}).
   */
  url?: string;
  /** Model name sent with every request (a call's `model` overrides it). */
  model?: string;
  /** Wire protocol. Default `openai-chat`. */
  dialect?: Dialect;
  /** API key: `Authorization: Bearer` (Anthropic: `x-api-key`). Never logged or reported. */
  apiKey?: string;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** Whole-request limit. Default: none. */
  timeout?: Duration;
  /** Limit to establish the connection. */
  connectTimeout?: Duration;
  /** Limit from start to the first token. */
  firstTokenTimeout?: Duration;
  /** Limit on any gap between chunks once streaming. */
  idleTimeout?: Duration;
  /** Tags added to every sample of this client's requests. */
  tags?: Record<string, string>;
  /** SLOs for `llm_goodput` and `Result.goodput`; a call's `slo` overrides them field by field. */
  slo?: SLO;
  /** Keep `Result.text` and `Result.reasoning`. Default `true`. */
  keepText?: boolean;
  /** Reuse connections across requests and iterations of a VU (k6's default). Default `true`. */
  connectionReuse?: boolean;
  /** Ask OpenAI-compatible servers for a usage chunk (`stream_options.include_usage`). Default `true`. */
  includeUsage?: boolean;
  /** tiktoken encoding used to count tokens when the server gives no usage. */
  encoding?: string;
}

/** One chat message. */
export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool' | string;
  content: string;
}

/** Keys every request accepts. Any other key is sent in the request body as given. */
export interface RequestCommon {
  /** Output token limit; omitted when absent (server default). */
  max_tokens?: number;
  /** Overrides the client's model for this request. */
  model?: string;
  /** `false` for a non-streaming request. Default `true`. */
  stream?: boolean;
  /** Extra headers for this request. */
  headers?: Record<string, string>;
  /** Tags added to this request's samples (over the client's). */
  tags?: Record<string, string>;
  /** SLO for this request, over the client's. */
  slo?: SLO;
  /** Any other body field: temperature, top_p, seed, ignore_eos, … */
  [field: string]: unknown;
}

/** A chat request: `messages`, or a `prompt` sent as one user message. */
export interface ChatRequest extends RequestCommon {
  messages?: Message[];
  prompt?: string;
}

/** A completion request. */
export interface CompleteRequest extends RequestCommon {
  prompt: string;
}

/**
 * Everything measured about one request, with the field names of `tokenstorm probe --json`.
 * Times are milliseconds measured from one monotonic start; a point never reached is 0.
 */
export interface Result {
  /** The request succeeded. */
  ok: boolean;
  /** HTTP status; 0 when no response arrived. */
  status: number;
  /** Why it failed; '' on success. */
  error_type: ErrorType;
  /** Error message ('' on success). Never contains the API key. */
  error: string;
  /** Which deadline passed when `error_type` is `timeout`: connect, first_token, idle, total. */
  timeout_phase: string;
  /** Start → response headers. */
  ttfb_ms: number;
  /** Start → first chunk of generated text (reasoning included). */
  ttft_ms: number;
  /** Start → first chunk of the answer proper, after any reasoning. */
  ttfo_ms: number;
  /** Gaps between consecutive content chunks (`content_chunks − 1` of them). */
  itl_ms: number[];
  /** (e2e − ttft) / (completion_tokens − 1); 0 with fewer than two tokens. */
  tpot_ms: number;
  /** Start → last content chunk. */
  e2e_ms: number;
  /** Start → stream closed. */
  duration_ms: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Part of `completion_tokens`, when the server reports it. */
  reasoning_tokens: number;
  /** Where the token counts came from. */
  token_source: 'usage' | 'tokenizer' | '';
  /** Chunks carrying a JSON payload. */
  chunks: number;
  /** Chunks carrying generated text. */
  content_chunks: number;
  finish_reason: string;
  /** The answer ('' with `keepText: false`). */
  text: string;
  /** Reasoning / thinking output, kept apart from the answer. */
  reasoning: string;
  /** The server's response id (stream id or x-request-id). */
  id: string;
  model: string;
  dialect: Dialect;
  bytes_sent: number;
  bytes_received: number;
  /** Whether the request met its SLO; null when no SLO was set. */
  goodput: boolean | null;
}

/**
 * A streaming LLM client. Create it in the init context (one per VU) or in the default
 * function: a VU reuses the connections of clients with the same options across
 * iterations. Only the VU that created a client may use it.
 *
 * @example
 * ```js
 * import { Client } from 'k6/x/tokenstorm';
 *
 * const client = new Client({
 *   url: __ENV.LLM_URL,            // e.g. http://127.0.0.1:8000/v1
 *   model: __ENV.LLM_MODEL,
 *   timeout: '60s',
 *   slo: { ttft: '500ms', tpot: '50ms' },
 *   tags: { server: 'vllm' },
 * });
 *
 * export default function () {
 *   const r = client.chat({
 *     messages: [{ role: 'user', content: 'Tell me a story.' }],
 *     max_tokens: 128,
 *     temperature: 0,              // any OpenAI field goes into the body
 *   });
 *   console.log(`ttft ${r.ttft_ms} ms, ${r.completion_tokens} tokens`);
 * }
 * ```
 */
export class Client {
  /** @throws when an option is invalid; the message names it. */
  constructor(options?: ClientOptions);
  /** The base URL in use (the embedded mock's when none was given). */
  readonly url: string;
  readonly model: string;
  readonly dialect: Dialect;
  /**
   * Streams one chat request and returns when the stream has closed. Failures are
   * reported in the Result (`ok: false`), never thrown; invalid arguments throw.
   * OpenAI-compatible clients use `/chat/completions`; Anthropic and Ollama clients
   * have only chat(), TGI clients only complete(): the other call throws.
   */
  chat(request: ChatRequest): Result;
  /**
   * Streams one completion (`/completions` for OpenAI-compatible clients, TGI's
   * `/generate_stream`).
   */
  complete(request: CompleteRequest): Result;
  /**
   * As {@link chat}, without blocking the VU: the request runs concurrently and the
   * Promise resolves with its Result, so one VU can drive several streams.
   * Invalid arguments reject the Promise.
   *
   * @example
   * ```js
   * export default async function () {
   *   const results = await Promise.all([1, 2, 3].map((i) =>
   *     client.chatAsync({ messages: [{ role: 'user', content: `question ${i}` }], max_tokens: 16 })));
   * }
   * ```
   */
  chatAsync(request: ChatRequest): Promise<Result>;
  /** As {@link complete}, without blocking the VU. */
  completeAsync(request: CompleteRequest): Promise<Result>;
}

/**
 * Options of the embedded mock server. Durations as in {@link Duration}; 0 means no delay,
 * an absent option the mock's default (ttft 20ms, itl 5ms).
 */
export interface MockOptions {
  /** Model name it serves. Default `mock-model`. */
  model?: string;
  /** Base time to first token (prefill). */
  ttft?: Duration;
  /** Extra prefill time per prompt token. */
  prefillPerToken?: Duration;
  /** Base gap between output chunks. */
  itl?: Duration;
  /** Extra decode gap per running sequence (a simple capacity model). */
  itlPerRunning?: Duration;
  /** Sequences decoded at once; more wait in a queue. 0 = unlimited. */
  maxNumSeqs?: number;
  /** Relative jitter on every delay, in [0, 1): 0.1 = ±10%. */
  jitter?: number;
  /** Seed of the jitter and the generated text. */
  seed?: number;
  /** Output tokens per streamed chunk. Default 1. */
  tokensPerChunk?: number;
  /** Probability, in [0, 1], that a request gets a random fault. */
  faultRate?: number;
  /** Faults drawn from when `faultRate` > 0 (default all). */
  faults?: Array<
    | 'http_400' | 'http_404' | 'http_422' | 'http_429' | 'http_500' | 'http_503'
    | 'stall_first' | 'stall_mid' | 'cut' | 'malformed' | 'oversized' | 'reset' | 'error_event'
  >;
  /** Reasoning tokens emitted before each answer (they count towards the output length). */
  reasoning?: number;
  /** Output length of a request that names no max_tokens. Default 16. */
  maxTokens?: number;
}

/**
 * Starts the embedded mock LLM server on 127.0.0.1 (once per test run, shared by all VUs)
 * and returns its OpenAI base URL (`http://127.0.0.1:PORT/v1`). Calling it again with the
 * same options returns the same URL; with different options it throws, since a run has one
 * mock. A {@link Client} without `url` uses this mock, starting it with default options
 * if no `mock()` call came first. For TGI and Ollama clients drop the `/v1` suffix.
 *
 * @example
 * ```js
 * const url = storm.mock({ ttft: '50ms', itl: '10ms', maxNumSeqs: 8, seed: 1 });
 * const client = new storm.Client({ url, model: 'mock-model' });
 * ```
 */
export function mock(options?: MockOptions): string;

/** One JSONL dataset line: chat `messages` or a `prompt`, optional `max_tokens` and any other body fields. */
export interface DatasetItem {
  messages?: Message[];
  prompt?: string;
  max_tokens?: number;
  [field: string]: unknown;
}

/** Options of {@link dataset}. */
export interface DatasetOptions {
  /**
   * `sequential` (default): file order with one cursor shared by all VUs, wrapping around;
   * `random`: uniform draws; `zipf`: item k (1-based rank in file order) with probability
   * ∝ k^-s.
   */
  order?: 'sequential' | 'random' | 'zipf';
  /** Zipf exponent, > 0. Default 1. Only with `order: 'zipf'`. */
  s?: number;
  /**
   * Seed of `random` and `zipf`: each VU's sequence is reproducible (the VU id is mixed
   * in, so VUs differ). Default: a random seed.
   */
  seed?: number;
}

/** A dataset as one VU sees it. Items are fresh copies: changing one affects nothing else. */
export interface Dataset {
  /** Number of items. */
  readonly length: number;
  /** The resolved file path. */
  readonly path: string;
  /** The next item in the dataset's order. */
  next(): DatasetItem;
  /** The item at index i (negative counts from the end); undefined when out of range. */
  at(i: number): DatasetItem | undefined;
}

/**
 * Opens a JSONL file of requests, one JSON object per line: `{"messages": [...]}` or
 * `{"prompt": "..."}`, optionally `"max_tokens"`. Blank lines are skipped; a bad line
 * throws naming `file:line`. The file is read once per test run and shared read-only by
 * all VUs. A relative path is resolved against the directory of the calling script, as
 * `open()` does. Call it in the init context.
 *
 * @example
 * ```js
 * const prompts = storm.dataset('./data/prompts.jsonl', { order: 'zipf', s: 1.1, seed: 7 });
 * export default function () {
 *   client.chat(prompts.next()); // an item is a valid request
 * }
 * ```
 */
export function dataset(path: string, options?: DatasetOptions): Dataset;

/** Draws integers, e.g. output lengths: `max_tokens: lengths.sample()`. */
export interface Sampler {
  sample(): number;
}

/** Options of {@link lognormal}. */
export interface LognormalOptions {
  /** Median of the distribution (before clamping), > 0. */
  median: number;
  /** Standard deviation of the underlying normal. Default 1. */
  sigma?: number;
  /** Smallest value returned. Default 1. */
  min?: number;
  /** Largest value returned; 0 = unbounded. Default 0. */
  max?: number;
  /** Seed: reproducible per VU (the VU id is mixed in). Default: random. */
  seed?: number;
}

/**
 * A log-normal sampler of integers: round(exp(ln(median) + sigma·N(0,1))), clamped to
 * [min, max]. Output lengths of chat workloads are close to log-normal.
 *
 * @example
 * ```js
 * const lengths = storm.lognormal({ median: 200, sigma: 0.8, min: 16, max: 1024, seed: 1 });
 * client.chat({ messages, max_tokens: lengths.sample() });
 * ```
 */
export function lognormal(options: LognormalOptions): Sampler;

/** A uniform sampler of integers in [min, max], both included. */
export function uniform(options: { min: number; max: number; seed?: number }): Sampler;

/** A sampler that always returns n (so a script can swap distributions). */
export function constant(n: number): Sampler;

/** The default export: every named export as one object. */
declare const storm: {
  Client: typeof Client;
  mock: typeof mock;
  dataset: typeof dataset;
  lognormal: typeof lognormal;
  uniform: typeof uniform;
  constant: typeof constant;
};
export default storm;
