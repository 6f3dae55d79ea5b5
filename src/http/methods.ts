import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { FastifyInstance } from 'fastify';

const METHODS: readonly HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Which methods a path has, for the 405 of a wrong method on an existing path (its Allow header).
 * Fastify's router only says "no route"; a second router of the same kind (find-my-way, Fastify's
 * own) holds every route as it is added, and is asked only when a request found none.
 */
export function trackMethods(app: FastifyInstance): (path: string) => string[] {
  const router = FindMyWay({ ignoreTrailingSlash: false, maxParamLength: 200 });
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (!METHODS.includes(method as HTTPMethod) || router.hasRoute(method as HTTPMethod, route.url)) continue;
      router.on(method as HTTPMethod, route.url, () => {});
    }
  });
  return (path) => METHODS.filter((method) => router.find(method, path) !== null);
}
