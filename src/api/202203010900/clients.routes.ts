import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ClientDetails } from '../../domain/chat/clients.service.js';
import { Errors } from '../../domain/errors.js';
import { projectFields } from '../../http/fields.js';
import { p } from '../../http/params.js';
import { recordData } from '../../http/record-data.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { success } from '../../http/contract.js';
import { listing } from './chat.params.js';
import { ChatAreaId, ClientRecord, clientRecord } from './chat.shapes.js';

/** Client fields may be null (spec section 2): an echoed null stays null. */
const clientText = () =>
  z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string({ error: 'must be a string or null' }).max(500, { error: 'must be at most 500 characters' }).nullable()).optional();
/** A client echoed back: its id and the masked provider key (set only through provider_key) are ignored. */
const clientData = recordData(
  {
    FiscalId: clientText(),
    CompanyName: clientText(),
    CompanyLegalName: clientText(),
    CompanyAddress1: clientText(),
    CompanyAddress2: clientText(),
    CompanyAddress3: clientText(),
    CompanyCity: clientText(),
    CompanyZipCode: clientText(),
  },
  ['Id', 'CompanyProviderKey'],
);

function clientDetails(d: z.output<typeof clientData> | undefined): ClientDetails | undefined {
  if (d === undefined) return undefined;
  return {
    fiscalId: d.FiscalId,
    companyName: d.CompanyName,
    companyLegalName: d.CompanyLegalName,
    companyAddress1: d.CompanyAddress1,
    companyAddress2: d.CompanyAddress2,
    companyAddress3: d.CompanyAddress3,
    companyCity: d.CompanyCity,
    companyZipCode: d.CompanyZipCode,
  };
}

/** Section 4.7 (current version only): clients, each with its provider key, and who belongs to them. */
export function clientsRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'GET',
    url: '/client.php',
    auth: 'session',
    summary: 'Clients: every client for administrators, your own otherwise; CompanyProviderKey masked for administrators, null otherwise',
    params: z.object(listing),
    reply: z.array(ClientRecord),
    async handler({ params, caller }) {
      const { rows, fields } = await services.clients.list(caller, params);
      return rows.map((row) => projectFields(clientRecord(row, caller), fields));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/client.php',
    auth: 'session',
    summary: 'Create a client with its provider key (stored encrypted); a user without a client becomes its member. Answers the id',
    params: z.object({ tz: p.tz(), provider_key: p.string(500), data: p.json(clientData, 10_000).optional() }),
    reply: ChatAreaId,
    async handler({ params, caller }) {
      return services.clients.create(caller, { providerKey: params.provider_key, details: clientDetails(params.data) });
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/client.php',
    auth: 'session',
    summary: 'Update a client (data, provider_key); administrators attach a user with user_id, or detach it with user_id and detach=1',
    params: z.object({
      tz: p.tz(),
      id: p.id(),
      data: p.json(clientData, 10_000).optional(),
      provider_key: p.string(500).optional(),
      user_id: p.id().optional(),
      detach: p.flag().optional(),
    }),
    reply: success,
    async handler({ params, caller }) {
      if (params.detach === 1 && params.user_id === undefined) throw Errors.missingParameter('user_id');
      await services.clients.patch(caller, params.id, {
        details: clientDetails(params.data),
        providerKey: params.provider_key,
        attachUserId: params.detach === 1 ? undefined : params.user_id,
        detachUserId: params.detach === 1 ? params.user_id : undefined,
      });
      return 'success';
    },
  });
}
