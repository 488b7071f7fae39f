import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type StubMode = 'ok' | 'hang' | '401' | '429' | '500' | 'break' | 'no-tools';
/** A tool call the stub answers with: the function's name and its arguments. */
export interface StubToolCall {
  name: string;
  arguments: Record<string, unknown>;
}
interface RecordedRequest {
  authorization: string | undefined;
  body: {
    model: string;
    messages: { role: string; content: string | null; tool_call_id?: string; tool_calls?: { id: string; function: { name: string; arguments: string } }[] }[];
    tools?: { type: string; function: { name: string; parameters: unknown } }[];
    tool_choice?: string;
    temperature?: number;
    max_tokens?: number;
    stream?: boolean;
  };
}

/** A local OpenAI-compatible server: records each request (with its Authorization) and answers per `state.mode`. */
export function startStub() {
  const requests: RecordedRequest[] = [];
  const hanging: ServerResponse[] = [];
  const state = {
    mode: 'ok' as StubMode,
    reply: 'Hello, I am the assistant.',
    usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
    /** While tools are offered (and not tool_choice none), each request takes the next batch and answers with those calls. */
    toolCalls: [] as StubToolCall[][],
    /** When set, the text answer is made from the request (e.g. from the tool results it carries). */
    replyFrom: undefined as ((body: RecordedRequest['body']) => string) | undefined,
  };
  let callIds = 0;
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return json(res, 404, { error: { message: 'no such route' } });
      const body = JSON.parse(raw) as RecordedRequest['body'];
      requests.push({ authorization: req.headers.authorization, body });
      const retryFast = { 'retry-after-ms': '5' };
      switch (state.mode) {
        case 'hang':
          hanging.push(res);
          return;
        case '401': {
          const key = (req.headers.authorization ?? '').replace('Bearer ', '');
          // Like OpenAI, echo part of the key: the service must not pass it on.
          return json(res, 401, { error: { message: `Incorrect API key provided: ${key}`, type: 'invalid_request_error', code: 'invalid_api_key' } });
        }
        case '429':
          return json(res, 429, { error: { message: 'Rate limit reached', type: 'requests' } }, retryFast);
        case '500':
          return json(res, 500, { error: { message: 'The server had an error' } }, retryFast);
        case 'no-tools':
          // Like a server without function calling: a request with tools is refused.
          if (body.tools) return json(res, 400, { error: { message: 'tools are not supported by this model' } });
          break;
        default:
          break;
      }
      if (!body.stream && body.tools && body.tool_choice !== 'none' && state.toolCalls.length > 0) {
        const batch = state.toolCalls.shift()!;
        const tool_calls = batch.map((c) => ({ id: `call_${++callIds}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
        return json(res, 200, {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls }, finish_reason: 'tool_calls' }],
          usage: state.usage,
        });
      }
      if (!body.stream) {
        return json(res, 200, {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: state.replyFrom ? state.replyFrom(body) : state.reply }, finish_reason: 'stop' }],
          usage: state.usage,
        });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
      if (state.mode === 'break') {
        // The provider drops the connection halfway through its answer.
        chunk({ id: 'c', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta: { content: 'Half an' }, finish_reason: null }] });
        setTimeout(() => res.destroy(), 20);
        return;
      }
      for (const piece of state.reply.match(/.{1,6}/gs) ?? []) {
        chunk({ id: 'c', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
      }
      chunk({ id: 'c', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage: state.usage });
      res.end('data: [DONE]\n\n');
    });
  };
  let server: Server = createServer(handler);
  let port = 0;
  return {
    requests,
    state,
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    async listen() {
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    },
    /** Connection refused: nothing listens on the port until `listen` again. */
    async refuse() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server = createServer(handler);
    },
    async close() {
      for (const res of hanging.splice(0)) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    releaseHanging() {
      for (const res of hanging.splice(0)) res.destroy();
    },
  };
}
