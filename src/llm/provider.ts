/**
 * The language-model port the chat service talks to: any OpenAI-compatible chat-completions server.
 * Failures are thrown as AppError('provider_error', ...) naming the cause; the key never appears in them.
 */
export type LlmRole = 'system' | 'user' | 'assistant' | 'tool';

export interface LlmMessage {
  role: LlmRole;
  content: string;
  /** An assistant turn that asked for tools (its content may be empty). */
  toolCalls?: LlmToolCall[];
  /** A tool turn: the call it answers. */
  toolCallId?: string;
}

/** A function the model may call, its parameters as JSON schema (OpenAI tools API). */
export interface LlmTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface LlmToolCall {
  id: string;
  name: string;
  /** JSON text as the model wrote it (may be malformed). */
  arguments: string;
}

export interface LlmRequest {
  /** The client's provider key, decrypted only for this call. */
  apiKey: string;
  model: string;
  messages: LlmMessage[];
  temperature?: number;
  /** Upper bound of tokens the reply may use. */
  maxTokens?: number;
  /** Offered to the model (complete only); the reply may then ask for calls instead of text. */
  tools?: LlmTool[];
  /** 'none': the tools stay described (the history holds calls) but the model must answer in text. */
  toolChoice?: 'auto' | 'none';
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
  /** The calls the model asked for (only when tools were offered). */
  toolCalls?: LlmToolCall[];
  /** The provider refused the request with tools and answered it again without them. */
  toolsRefused?: boolean;
}

export interface LlmProvider {
  complete(request: LlmRequest): Promise<LlmCompletion>;
  /** Same as complete, handing each piece of text to `onDelta` as it arrives. */
  stream(request: LlmRequest, onDelta: (text: string) => void): Promise<LlmCompletion>;
}
