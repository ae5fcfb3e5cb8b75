import { RequestMethod, type INestApplication, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { ANY_ROLE_KEY, OPERATOR_KEY, PUBLIC_KEY, ROLES_KEY } from '../auth/roles.decorator';

export interface RouteInfo {
  /** Upper-case HTTP method. */
  method: string;
  /** Express form, e.g. `/v1/threads/:threadId`. */
  path: string;
  public: boolean;
  /** Roles a caller must hold all of. */
  roles: string[];
  /** Roles a caller must hold one of (undefined: no such rule). */
  anyRole: string[] | undefined;
  /** Deployment-level: only an operator credential may call it (and it may call nothing else). */
  operator: boolean;
  controller: string;
  handler: string;
}

/**
 * Every route of every controller the app has, with its auth metadata, read from Nest's module
 * container: the same source Nest builds its router from. The OpenAPI document and the BOLA sweep
 * both use it, so a new controller (in any folder) is documented and swept without anyone listing it.
 */
export function listRoutes(app: INestApplication): RouteInfo[] {
  const routes: RouteInfo[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Type | undefined;
      if (!controller) continue;
      const base = pathsOf(Reflect.getMetadata(PATH_METADATA, controller));
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        if (name === 'constructor') continue;
        const handler = (controller.prototype as Record<string, unknown>)[name];
        if (typeof handler !== 'function') continue;
        const routePath = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (routePath === undefined || method === undefined) continue;
        const meta = <T>(key: string): T | undefined =>
          (Reflect.getMetadata(key, handler) as T | undefined) ??
          (Reflect.getMetadata(key, controller) as T | undefined);
        for (const b of base) {
          for (const p of pathsOf(routePath)) {
            routes.push({
              method: RequestMethod[method],
              path: joinPath(b, p),
              public: meta<boolean>(PUBLIC_KEY) === true,
              roles: meta<string[]>(ROLES_KEY) ?? [],
              anyRole: meta<string[]>(ANY_ROLE_KEY),
              operator: meta<boolean>(OPERATOR_KEY) === true,
              controller: controller.name,
              handler: name,
            });
          }
        }
      }
    }
  }
  return routes.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}

function pathsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  return [typeof value === 'string' ? value : '/'];
}

function joinPath(a: string, b: string): string {
  const joined = `/${[a, b]
    .map((s) => s.replace(/^\/+|\/+$/g, ''))
    .filter((s) => s !== '')
    .join('/')}`;
  return joined;
}

/** `/v1/threads/:threadId` → `/v1/threads/{threadId}` */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}
