import { ConfigError } from '../core/config.ts';
import { AppError } from '../core/errors.ts';
import { HelpRequested, UsageError, version } from './cli.ts';

const HELP = `afterimage ${version}: finds, keeps and searches the metadata of YouTube channels' videos

usage: npx afterimage <command> [options]       (from the project folder; elsewhere npx fetches an unrelated npm package)
       npx afterimage <command> --help          (or help <command>) how to call one

service
  start                 API and worker in one process (what \`npm start\` runs)
  api                   the HTTP API only (run several behind a load balancer)
  worker                the job worker only (run as many as the queue needs)
  demo [--fresh] [--dir DIR] [--videos N]   build a demo archive (3 channels, deleted and re-uploaded videos,
                        subtitles, media) in its own directory, offline, and start the service on it

operator (each takes --json for scripts)
  import <dir> [--data-dir DIR]   load a yt-dlp archive directory and its subtitle files into the running
                        service's database (or the one named), and keep it as an archive root crawls read
                        (idempotent, with progress; exit 3 when some files were skipped, each listed with the reason)
  archives list|add <dir>|remove <dir>   the archive roots crawls read beside ARCHIVE_DIR (remove deletes nothing)
  backfill <@handle|channel URL|UC…|video URL>...   crawl these channels now from every source, then check their videos
  refresh [--channel UC…]... [--video ID]... [--no-wait]   check video statuses now (default: every video due)
  reindex               rebuild the Typesense search index from every video, then switch searches to it
  status [--data-dir DIR]   the services and workers on this database and their versions, the queue, each
                        source's last crawl, checks due, stenograms, disk; exit 1 naming what is wrong
  migrate               apply database migrations (start does this too)
  config                print this shell's configuration (not a running service's), secrets masked
  backup [--out FILE] [--data-dir DIR]   one file holding the embedded database (taken while it runs), stenograms and server key
  restore FILE [--data-dir DIR]   restore a backup into a DATA_DIR that holds no database (checked before anything is written)
  users create --email E --tier anonymous|registered|plus|pro [--admin] [--password-stdin]
  users password --email E --password-stdin   set a password (read from stdin) for the website; signs them out elsewhere
  keys create --user E [--scope L1|L2|L3|L4]   issue a key (revokes the user's current one)
  keys revoke --user E
  keys list [--all]     key prefixes, owners and scopes; never the keys
  tiers list
  tiers set <tier> [--api-access true|false] [--max-scope L3] [--feature NAME=on|off] [--limit NAME=N|unlimited]
  subtitles convert <file> --to srt|vtt|txt   any WebVTT/SRT/timedtext/json3 file, normalised, to stdout
  evidence verify <bundle.zip>   check an evidence bundle offline: every file's hash, the manifest, raw bodies, history
  bench generate --videos N [--seed S] [--channels M]   write a synthetic seeded corpus (for benchmarks) into the database

assistants
  mcp --url http://host:8080 --key tsk_…   stdio MCP bridge to the service's /mcp (or AFTERIMAGE_URL, AFTERIMAGE_API_KEY)

Every command that uses the database takes --data-dir DIR; without it, the one DATA_DIR or DATABASE_URL names, else the
running service's. Configuration comes from the environment: see README.md or \`npx afterimage config\`.`;

// A command may answer something (serve: what the demo uses); the CLI ignores it.
type Command = (args: string[]) => Promise<unknown> | void;

// Each command's module is loaded when it runs: a quick command (subtitles convert, keys list) does
// not pay for loading the API server, the MCP SDK and the sources.
const service = (role: 'start' | 'api' | 'worker') => async (): Promise<Command> => {
  const { serviceCommand } = await import('./commands/service.ts');
  return (args) => serviceCommand(role, args);
};
const commands: Record<string, () => Promise<Command>> = {
  start: service('start'),
  api: service('api'),
  worker: service('worker'),
  demo: async () => (await import('./commands/demo.ts')).demoCommand,
  migrate: async () => (await import('./commands/migrate.ts')).migrateCommand,
  config: async () => (await import('./commands/config.ts')).configCommand,
  users: async () => (await import('./commands/accounts.ts')).usersCommand,
  keys: async () => (await import('./commands/accounts.ts')).keysCommand,
  tiers: async () => (await import('./commands/tiers.ts')).tiersCommand,
  import: async () => (await import('./commands/import.ts')).importCommand,
  archives: async () => (await import('./commands/archives.ts')).archivesCommand,
  subtitles: async () => (await import('./commands/subtitles.ts')).subtitlesCommand,
  refresh: async () => (await import('./commands/refresh.ts')).refreshCommand,
  backfill: async () => (await import('./commands/refresh.ts')).backfillCommand,
  status: async () => (await import('./commands/status.ts')).statusCommand,
  reindex: async () => (await import('./commands/reindex.ts')).reindexCommand,
  bench: async () => (await import('./commands/bench.ts')).benchCommand,
  mcp: async () => (await import('./commands/mcp.ts')).mcpCommand,
  backup: async () => (await import('./commands/backup.ts')).backupCommand,
  restore: async () => (await import('./commands/backup.ts')).restoreCommand,
  evidence: async () => (await import('./commands/evidence.ts')).evidenceCommand,
};

async function main([name, ...args]: string[]): Promise<void> {
  // `help users create` is `users create --help`: each command answers for itself.
  if (name === 'help' && args.length > 0) return main([...args, '--help']);
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  if (name === '--version' || name === 'version') {
    process.stdout.write(`${version}\n`);
    return;
  }
  const load = commands[name];
  if (!load) throw new UsageError(`unknown command "${name}"; run npx afterimage help`);
  await (await load())(args);
}

/**
 * Runs `afterimage <argv>` in this process (scripts/bin.mjs; tests call it too): a failure is printed
 * (as the JSON error envelope with --json) and sets the exit code, 2 for a mistake in the call, else 1.
 */
export async function runAfterimage(argv: string[]): Promise<void> {
  try {
    await main(argv);
  } catch (error) {
    if (error instanceof HelpRequested) {
      process.stdout.write(`${error.usage}\n`);
      return;
    }
    const code =
      error instanceof AppError
        ? error.code
        : error instanceof UsageError || error instanceof ConfigError
          ? 'INVALID_INPUT'
          : 'INTERNAL_ERROR';
    const message = error instanceof Error ? error.message : String(error);
    if (argv.includes('--json')) process.stdout.write(`${JSON.stringify({ error: { code, message } }, null, 2)}\n`);
    else process.stderr.write(`afterimage: ${message}\n`);
    process.exitCode = error instanceof UsageError || error instanceof ConfigError ? 2 : 1;
  }
}
