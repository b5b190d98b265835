/**
 * The prompts a person picks in their client (a slash command in Claude, a prompt in the
 * llama.cpp WebUI): `remember` and `recall`, each one user message asking the model to
 * use the three tools the right way — read the index first, then open or write the
 * entries that matter. They read no memory themselves: the model does, with the tools.
 */

import { type GetPromptResult, type Prompt, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';

interface PromptDefinition extends Prompt {
  readonly argument: string;
  readonly text: (value: string) => string;
}

const PROMPTS: readonly PromptDefinition[] = [
  {
    name: 'remember',
    title: 'Remember',
    description: 'Save something to your memory, in the entry where it belongs.',
    arguments: [
      {
        name: 'what',
        description: 'What to remember: a fact, a preference, a decision, in your words.',
        required: true,
      },
    ],
    argument: 'what',
    text: (what) =>
      `Remember this in my memory:\n\n${what}\n\n` +
      'First call memory_open with no arguments to read the index. If an entry already covers this subject, ' +
      'open it with memory_open, then add to it or correct it with memory_write. Otherwise create one entry with ' +
      'memory_write: a name such as topics/preferences in the right group, a one-line description, and the text ' +
      'as new. Keep each entry on one subject. Then tell me in one line what you saved, and where.',
  },
  {
    name: 'recall',
    title: 'Recall',
    description: 'Answer from what your memory holds about a person, a project or a topic.',
    arguments: [
      {
        name: 'subject',
        description: 'Whom or what to recall: a person, a project, a topic, or an entry name such as people/ada.',
        required: true,
      },
    ],
    argument: 'subject',
    text: (subject) =>
      `What does my memory hold about ${subject}?\n\n` +
      'Call memory_open with no arguments to read the index, then open every entry that bears on it in one ' +
      'memory_open call, with their names. Answer from what those entries say, and tell me if the memory holds ' +
      'nothing about it.',
  },
];

export const PROMPT_LIST: readonly Prompt[] = PROMPTS.map(({ name, title, description, arguments: args }) => ({
  name,
  title,
  description,
  arguments: args,
}));

function invalidParams(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}

/** The prompt `name` with its argument filled in; a JSON-RPC error for an unknown prompt or a missing argument. */
export function getPrompt(name: string, args: Readonly<Record<string, string>> | undefined): GetPromptResult {
  const prompt = PROMPTS.find((candidate) => candidate.name === name);
  if (prompt === undefined) {
    throw invalidParams(
      `Unknown prompt ${JSON.stringify(name)}. The prompts are ${PROMPTS.map((p) => p.name).join(', ')}.`,
    );
  }
  const value = args?.[prompt.argument]?.trim() ?? '';
  if (value === '') {
    throw invalidParams(
      `The ${prompt.name} prompt needs its argument ${prompt.argument}: ${prompt.arguments?.[0]?.description}`,
    );
  }
  return {
    description: prompt.description,
    messages: [{ role: 'user', content: { type: 'text', text: prompt.text(value) } }],
  };
}

/** Whether `name` is a prompt whose argument completes with entry names (recall's subject). */
export function completesWithNames(prompt: string, argument: string): boolean {
  return prompt === 'recall' && argument === 'subject';
}
