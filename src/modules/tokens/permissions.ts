export const RESOURCES = ['assistants', 'agents', 'tasks', 'strategies', 'sip', 'providers', 'calls', 'organizations', 'tokens'] as const;
export type Resource = (typeof RESOURCES)[number];
export type Permission = `${Resource}:${'read' | 'write'}`;

export const ALL_PERMISSIONS: readonly Permission[] = RESOURCES.flatMap((r) => [`${r}:read`, `${r}:write`] as const);

export const ROLES = {
  viewer: ALL_PERMISSIONS.filter((p) => p.endsWith(':read')),
  editor: ALL_PERMISSIONS.filter((p) => p !== 'organizations:write' && p !== 'tokens:write'),
  admin: ALL_PERMISSIONS,
} as const satisfies Record<string, readonly Permission[]>;

export type Role = keyof typeof ROLES;
export const ROLE_NAMES = Object.keys(ROLES) as Role[];
