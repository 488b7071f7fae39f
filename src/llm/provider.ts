/**
 * The language-model port the chat service talks to: any OpenAI-compatible chat-completions server.
 * Failures are thrown as AppError('provider_error', ...) naming the cause; the key never appears in them.
 */
export type LlmRole = 'system' | 'user' | 'assistant';

export interface LlmMessage {
  role: LlmRole;
  content: string;
}

export interface LlmRequest {
  /** The client's provider key, decrypted only for this call. */
  apiKey: string;
  model: string;
  messages: LlmMessage[];
  temperature?: number;
  /** Upper bound of tokens the reply may use. */
  maxTokens?: number;
  signal?: AbortSignal;
}

export interface LlmUsage {
  prompt: number;
  completion: number;
  total: number;
}

export interface LlmCompletion {
  text: string;
  usage: LlmUsage;
}

export interface LlmProvider {
  complete(request: LlmRequest): Promise<LlmCompletion>;
  /** Same as complete, handing each piece of text to `onDelta` as it arrives. */
  stream(request: LlmRequest, onDelta: (text: string) => void): Promise<LlmCompletion>;
}
