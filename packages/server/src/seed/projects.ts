/**
 * Project refs of the sample data: 20 lower-case letters, like a hosted project's ref. The first
 * is the busiest and is the one printed in the quick-start curl lines.
 */
export const SEED_PROJECTS = [
  "kzbtwfqmxrhyglnpvcas",
  "pjoqvnwtdhsmylkxefra",
  "wmcrxagtbzjdnpleuhsq",
  "default",
] as const;

/** share of events per project, in SEED_PROJECTS order */
export const PROJECT_WEIGHTS = [0.5, 0.25, 0.15, 0.1] as const;
