/** The legacy reply envelope: `status` 0 on success with the endpoint's data, 1 on error with a message. */
export interface SuccessEnvelope<T> {
  status: 0;
  data: T;
}
export interface ErrorEnvelope {
  status: 1;
  data: string;
}
export type Envelope<T> = SuccessEnvelope<T> | ErrorEnvelope;

export const ok = <T>(data: T): SuccessEnvelope<T> => ({ status: 0, data });
export const failure = (message: string): ErrorEnvelope => ({ status: 1, data: message });
