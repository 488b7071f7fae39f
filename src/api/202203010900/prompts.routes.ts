import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Caller } from '../../domain/caller.js';
import { DEFAULT_PROMPT_MAX_TOKENS, parsePrompt } from '../../domain/chat/prompts.service.js';
import { p } from '../../http/params.js';
import { eventStream } from '../../http/sse.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { PromptReply, PromptStream } from './chat.shapes.js';

/**
 * Streams the reply as server-sent events; the response starts with the first piece of text, so a
 * failure before that still answers the ordinary error envelope.
 */
async function streamPrompt(services: Services, caller: Caller, request: FastifyRequest, reply: FastifyReply, prompt: ReturnType<typeof parsePrompt>, maxTokens: number) {
  const stream = eventStream(request, reply);
  try {
    const result = await services.prompts.stream(caller, prompt, maxTokens, (text) => stream.send('delta', { text }), stream.signal);
    stream.done(result.text, { usage: result.usage });
  } catch (error) {
    if (!stream.started) throw error;
    stream.fail(error);
  }
  return undefined;
}

/** Section 4.7 (current version only): prompts to the client's provider, answered whole or streamed. */
export function promptsRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'POST',
    url: '/aichat.php',
    auth: 'session',
    summary:
      "Send a prompt (words, or a JSON array of {role, content}) to your client's provider; data is the reply text, or with tokens=1 the prompt's token count. Accept: text/event-stream streams the reply",
    params: z.object({
      tz: p.tz(),
      prompt: p.string(200_000),
      max_tokens: p.int().refine((n) => n >= 1, { error: 'must be a positive number of tokens' }).default(DEFAULT_PROMPT_MAX_TOKENS),
      tokens: p.flag().default(0),
    }),
    reply: PromptReply,
    stream: PromptStream,
    async handler({ params, caller, request, reply }) {
      const prompt = parsePrompt(params.prompt);
      if (params.tokens === 1) return services.prompts.countTokens(prompt);
      if (/\btext\/event-stream\b/i.test(request.headers.accept ?? '')) {
        // The stream has taken over the reply: nothing of this value is sent.
        return (await streamPrompt(services, caller, request, reply, prompt, params.max_tokens)) ?? '';
      }
      return (await services.prompts.complete(caller, prompt, params.max_tokens)).text;
    },
  });
}
