import type { Metrics } from '../observability/metrics.js';
import type { LlmCompletion, LlmProvider } from './provider.js';

/** Counts provider calls by outcome and the tokens the provider reports, for /metrics. */
export function instrumentedProvider(provider: LlmProvider, metrics: Metrics): LlmProvider {
  const observe = async (call: () => Promise<LlmCompletion>): Promise<LlmCompletion> => {
    try {
      const completion = await call();
      metrics.llmCalls.inc({ outcome: 'ok' });
      metrics.llmTokens.inc({ kind: 'prompt' }, completion.usage.prompt);
      metrics.llmTokens.inc({ kind: 'completion' }, completion.usage.completion);
      return completion;
    } catch (error) {
      metrics.llmCalls.inc({ outcome: 'error' });
      throw error;
    }
  };
  return {
    complete: (request) => observe(() => provider.complete(request)),
    stream: (request, onDelta) => observe(() => provider.stream(request, onDelta)),
  };
}
