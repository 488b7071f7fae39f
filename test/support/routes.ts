import type { FastifyInstance } from 'fastify';
import { CURRENT } from './helper.js';

/** One operation as the app serves it: its documented parameters, and whether it reads a file upload. */
export interface AppRoute {
  method: string;
  url: string;
  params: string[];
  upload: boolean;
}

/**
 * Every method and URL under the two version prefixes, read from the running app (its router and its
 * OpenAPI document), so a suite that must reach every operation cannot miss a new one. The
 * `/api/202111101200/` mount repeats the older version and is left out.
 */
export function enumerateRoutes(app: FastifyInstance): AppRoute[] {
  const doc = app.swagger() as { paths: Record<string, Record<string, { parameters?: { name: string }[]; requestBody?: { content: Record<string, { schema?: { properties?: Record<string, unknown> } }> } }>> };
  const documented = (url: string, method: string): string[] => {
    const op = doc.paths[url]?.[method.toLowerCase()];
    if (!op) return [];
    const body = Object.values(op.requestBody?.content ?? {}).flatMap((c) => Object.keys(c.schema?.properties ?? {}));
    return [...(op.parameters ?? []).map((p) => p.name), ...body];
  };
  const uploadsFile = (url: string): boolean =>
    Object.values(doc.paths[url]?.post?.requestBody?.content?.['multipart/form-data']?.schema?.properties ?? {}).some(
      (property) => (property as { format?: string }).format === 'binary',
    );
  const routes: AppRoute[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /(\/\S+) \(([^)]+)\)\s*$/.exec(line);
    if (!match) continue;
    const url = match[1]!;
    if (!url.startsWith(`${CURRENT}/`) && !url.startsWith('/202111101200/')) continue;
    for (const method of match[2]!.split(',').map((m) => m.trim())) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      // Uploads are the operations whose multipart body documents a binary file field.
      routes.push({ method, url, params: documented(url, method), upload: method === 'POST' && uploadsFile(url) });
    }
  }
  // A route whose schema is not documented (uploads read their own fields) gets its resource's parameters.
  const resource = (url: string) => url.split('/').pop();
  for (const route of routes) {
    if (route.params.length > 0) continue;
    route.params = [...new Set(routes.filter((r) => resource(r.url) === resource(route.url)).flatMap((r) => r.params))];
  }
  return routes;
}

/** Ids of one user's rows of each kind, for requests that should get past the first check of an operation. */
export interface OwnedRows {
  id: number;
  jobId: number;
  /** A job the operations that delete jobs may delete. */
  spareJobId: number;
  trainingId: number;
  appId: number;
  clientId: number;
  usecaseId: number;
  sentenceId: number;
  chatId: number;
  chatHash: string;
}

/**
 * A plausible value for each documented parameter, so each operation gets as deep as it can with the
 * owner's own rows; undefined leaves the parameter out (credentials and provider keys are the caller's
 * business).
 */
export function plausibleValue(name: string, route: AppRoute, owned: OwnedRows): string | number | undefined {
  const resource = route.url.split('/').pop()!.replace('.php', '');
  const ids: Record<string, number> = {
    trainings: owned.trainingId,
    chat: owned.chatId,
    usecase: owned.usecaseId,
    sentence: owned.sentenceId,
    client: owned.clientId,
    app: owned.appId,
    jobs: owned.spareJobId,
  };
  switch (name) {
    case 'tz':
      return 'Europe/Madrid';
    case 'job_id':
      return route.method === 'DELETE' && resource === 'jobs' ? owned.spareJobId : owned.jobId;
    case 'id':
      return ids[resource] ?? owned.jobId;
    case 'training_id':
      return owned.trainingId;
    case 'user_id':
    case 'user':
      return owned.id;
    case 'usca_id':
      return owned.usecaseId;
    case 'sent_id':
      return owned.sentenceId;
    case 'chat_id':
      return owned.chatId;
    case 'client_id':
    case 'clie_id':
      return owned.clientId;
    case 'app':
    case 'app_name':
    case 'app_id':
      return 'forecast';
    case 'data':
      return resource === 'client' ? JSON.stringify({ CompanyName: 'Plausible SL' }) : JSON.stringify({ Description: 'plausible use case' });
    case 'fields':
      return '*';
    case 'prompt':
      return 'Hello there';
    case 'text':
    case 'new_text':
    case 'message':
    case 'description':
    case 'procedure':
    case 'caller':
      return 'plausible text';
    case 'name':
      return resource === 'stat' ? 'canary' : 'Plausible';
    case 'host':
      return 'canary-host';
    case 'pid':
    case 'PID':
      return 7;
    case 'lastname':
      return 'Tester';
    case 'phone':
    case 'phonenumber':
      return '600000000';
    case 'hash':
      return owned.chatHash;
    case 'period':
      return 'P1D';
    case 'date_from':
    case 'upd_date':
      return '2020-01-01';
    case 'date_to':
    case 'until':
      return '2030-12-31';
    case 'status':
      return resource === 'subscriptions' ? 'subscribed' : resource === 'stat' ? '1' : 0;
    case 'output':
    case 'type':
    case 'progress':
    case 'reqType':
    case 'insight':
    case 'alter':
    case 'intervals':
    case 'simple':
    case 'request_type':
    case 'update':
    case 'terminate':
    case 'finish':
    case 'tokens':
    case 'group_order':
    case 'load_columns':
      return 0;
    case 'mode':
    case 'newTraining':
    case 'enabled':
    case 'active':
    case 'rate':
    case 'file':
    case 'log_type':
    case 'order_id':
    case 'neurons':
    case 'inputs':
    case 'outputs':
    case 'layers_requested':
    case 'layers_created':
    case 'success_rate':
      return 1;
    case 'progress_type':
      return 2;
    case 'limit':
      return 10;
    case 'max_tokens':
      return 16;
    case 'probability':
      return 0.5;
    case 'direction':
      return 'Down';
    case 'control':
      return 'auto';
    case 'advance':
      return 50;
    case 'params':
      return 'plan=basic';
    case 'query':
      return '{"w":[1,2]}';
    case 'sort':
      return 'desc';
    case 'format':
      return 'svg';
    case 'column':
      return 'sales';
    case 'history':
      return 10;
    case 'width':
      return 400;
    case 'height':
      return 300;
    default:
      return undefined;
  }
}
