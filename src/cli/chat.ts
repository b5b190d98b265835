/**
 * `engram chat`: a small terminal chat with memory against any OpenAI-compatible
 * endpoint. Each line typed (or piped, one prompt a line) is a turn: the answer streams
 * to stdout, the model's memory calls run through the library's OpenAI adapter and are
 * shown on stderr as they happen, until the model answers without calling a tool (at
 * most --max-tool-rounds rounds of calls a turn). History records the calls as
 * `chat:MODEL`. Ctrl-C stops an answer, or leaves at the prompt; Ctrl-D leaves. An
 * endpoint's failure is one line; piped input stops there (exit 1), a person goes on.
 */

import { createInterface } from 'node:readline';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { MemoryCall } from '../adapters/calls.js';
import { type OpenAiToolCall, openAiToolMessages } from '../adapters/openai.js';
import { actorLabel } from '../memory/model/caller.js';
import { openAiTools } from '../memory/tools/definitions.js';
import { type ChatEndpoint, chatEndpoint, Stopped } from './chat-endpoint.js';
import type { AssistantReply } from './chat-stream.js';
import type { CommonOptions, Context } from './context.js';
import type { Run } from './entries.js';
import type { Environment } from './environment.js';
import { type Output, UsageError } from './output.js';
import { forTerminal } from './terminal.js';

interface ChatOptions extends CommonOptions {
  readonly baseUrl: string;
  readonly model?: string;
  readonly apiKeyEnv?: string;
  readonly system?: string;
  readonly maxToolRounds: number;
  readonly timeout: number;
}

const SYSTEM = [
  'You have a persistent memory, shared with the other assistants this person uses, through the tools',
  'memory_open, memory_write and memory_drop. When the conversation touches the person, their work or the',
  'people they work with, look at what you remember first (memory_open() lists it). When you learn something',
  'lasting (a preference, a fact about them, a project, a person), write it down. Answer briefly.',
].join(' ');

function wholeNumber(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a whole number from 1 up.');
  return number;
}

/** What a memory call is about, for its line: the names it names, or the index. */
function subject(call: MemoryCall): string {
  let args = call.arguments;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      return '(arguments not JSON)';
    }
  }
  const { name, names } = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
  if (typeof name === 'string') return name;
  if (Array.isArray(names) && names.length > 0) return names.join(' ');
  if (typeof names === 'string') return names;
  return call.name === 'memory_open' ? '(the index)' : '';
}

/** `⟡ memory_write topics/tea … ok`, or the refusal's code. */
function callLine(call: MemoryCall): string {
  const outcome = call.result.isError ? (call.result.code ?? 'refused') : 'ok';
  return `⟡ ${call.name} ${subject(call)} … ${outcome}`.replace(/ {2,}/g, ' ');
}

interface Turn {
  readonly endpoint: ChatEndpoint;
  readonly context: Context;
  readonly output: Output;
  readonly options: ChatOptions;
  readonly model: string;
  readonly messages: unknown[];
  readonly signal: AbortSignal;
}

/** Tool messages for calls the turn will not run: other tools, or past the round cap. */
function notRun(calls: readonly OpenAiToolCall[], why: (call: OpenAiToolCall) => string) {
  return calls.map((call) => ({ role: 'tool', tool_call_id: call.id, content: why(call) }));
}

/** One turn: ask, run the memory calls, ask again, until an answer without calls or the round cap. */
async function turn({ endpoint, context, output, options, model, messages, signal }: Turn): Promise<void> {
  const tools = openAiTools(context.memory.policy);
  const caller = { user: context.user, label: actorLabel(`chat:${model}`, 'chat') };
  for (let round = 0; ; round++) {
    let open = false; // whether the answer's last line is still open on stdout
    const reply: AssistantReply = await endpoint.complete(
      { model, messages, tools },
      (text) => {
        output.exact(forTerminal(text));
        open = !text.endsWith('\n');
      },
      signal,
    );
    if (open || (reply.content === '' && reply.toolCalls.length === 0)) output.exact('\n');
    messages.push({
      role: 'assistant',
      content: reply.content || null,
      ...(reply.toolCalls.length > 0 ? { tool_calls: reply.toolCalls } : {}),
    });
    if (reply.toolCalls.length === 0) return;
    if (round === options.maxToolRounds) {
      messages.push(...notRun(reply.toolCalls, () => 'Not run: too many tool calls in one turn. Answer the user now.'));
      output.note(
        `engram chat: stopped: the model was still calling tools after ${options.maxToolRounds} round${options.maxToolRounds === 1 ? '' : 's'} of memory calls`,
      );
      return;
    }
    const { messages: results, unhandled } = await openAiToolMessages(
      context.memory,
      { tool_calls: reply.toolCalls },
      {
        caller,
        onCall: (call) => output.note(callLine(call)),
      },
    );
    messages.push(
      ...results,
      ...notRun(
        unhandled,
        (call) =>
          `There is no tool ${JSON.stringify(call.function?.name ?? '')} here; the tools are memory_open, memory_write and memory_drop.`,
      ),
    );
  }
}

async function chat(context: Context, output: Output, options: ChatOptions, environment: Environment): Promise<void> {
  if (options.json) throw new UsageError('chat is a conversation for a person, with no JSON output: drop --json');
  const apiKey = options.apiKeyEnv === undefined ? undefined : environment.variable(options.apiKeyEnv);
  if (options.apiKeyEnv !== undefined && apiKey === undefined) {
    throw new UsageError(`--api-key-env ${options.apiKeyEnv}: that variable is not set`);
  }
  const endpoint = chatEndpoint({
    baseUrl: options.baseUrl,
    apiKey,
    apiKeyEnv: options.apiKeyEnv,
    timeoutMs: options.timeout * 1000,
  });
  const terminal = process.stdin.isTTY === true;
  const lines = createInterface({ input: process.stdin, ...(terminal ? { output: process.stdout, terminal } : {}) });
  // Taken now, so that lines piped in while the model is found are kept, not missed.
  const input = lines[Symbol.asyncIterator]();
  let current: AbortController | undefined;
  // On a terminal Ctrl-C stops the answer being written, or at the prompt ends the chat; piped, it ends it.
  const interrupt = () => {
    current?.abort();
    if (!terminal || !current) lines.close();
  };
  lines.on('SIGINT', interrupt);
  process.on('SIGINT', interrupt);
  try {
    const model = options.model ?? (await endpoint.firstModel());
    output.note(
      `engram chat: ${model} at ${endpoint.url}, memory in ${context.database}${terminal ? ' (Ctrl-D to leave)' : ''}`,
    );
    const messages: unknown[] = [{ role: 'system', content: options.system ?? SYSTEM }];
    lines.setPrompt('> ');
    if (terminal) lines.prompt();
    for (let next = await input.next(); !next.done; next = await input.next()) {
      const line = next.value;
      if (line.trim() !== '') {
        const before = messages.length;
        messages.push({ role: 'user', content: line });
        current = new AbortController();
        try {
          await turn({ endpoint, context, output, options, model, messages, signal: current.signal });
        } catch (error) {
          // The turn is forgotten, so a person can go on; what it wrote to memory stays. A
          // script cannot, so piped input ends at the first failure, with exit code 1.
          messages.length = before;
          if (error instanceof Stopped) output.exact('\n');
          else if (terminal) output.note(`engram: ${(error as Error).message}`);
          else throw error;
        } finally {
          current = undefined;
        }
      }
      if (terminal) lines.prompt();
    }
  } finally {
    process.off('SIGINT', interrupt);
    lines.close();
    if (terminal) output.exact('\n'); // the shell's prompt on a line of its own
  }
}

export function registerChatCommand(
  program: Command,
  common: (command: Command, output?: { readonly json: boolean }) => Command,
  run: Run,
  environment: Environment,
): void {
  common(program.command('chat'), { json: false })
    .description('Chat in the terminal with a model of any OpenAI-compatible endpoint, with this memory as its tools')
    .requiredOption(
      '--base-url <url>',
      'the endpoint, the part before /chat/completions (e.g. http://127.0.0.1:8080/v1)',
    )
    .option('--model <name>', 'the model to ask (else the first the endpoint lists)')
    .option('--api-key-env <name>', 'send the API key held in this environment variable')
    .option('--system <text>', 'the system prompt (else one that tells the model to use its memory)')
    .addOption(
      new Option('--max-tool-rounds <n>', 'rounds of memory calls one answer may take')
        .default(8)
        .argParser(wholeNumber),
    )
    .addOption(
      new Option('--timeout <seconds>', 'give up when the endpoint is silent this long')
        .default(120)
        .argParser(wholeNumber),
    )
    .addHelpText(
      'after',
      `
Examples:
  engram chat --base-url http://127.0.0.1:8080/v1                         llama-server
  engram chat --base-url http://127.0.0.1:11434/v1 --model qwen3:8b       Ollama
  engram chat --base-url https://api.openai.com/v1 --model gpt-4.1 --api-key-env OPENAI_API_KEY`,
    )
    .action((options: ChatOptions) => run(options, (context, output) => chat(context, output, options, environment)));
}
