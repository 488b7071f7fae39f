import { p } from '../../http/params.js';
import { wireDateToInstant } from '../shared/time.js';

/** Parameters the chat area's listings share (clients, use cases, chats, sentences). */
export const listing = { tz: p.tz(), fields: p.string(2000).optional(), where: p.string(2000).optional() };

/** `upd_date` of a listing: rows changed since that date, read in the caller's zone. */
export const since = (text: string | undefined, tz: string, parameter: string) => (text === undefined ? undefined : wireDateToInstant(text, tz, parameter));
