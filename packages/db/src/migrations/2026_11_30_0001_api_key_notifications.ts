import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.

export async function up(db: Kysely<any>): Promise<void> {
  // An API process keeps the keys it has checked in memory (see @dxs/db/ApiKeyChannel): a key revoked,
  // moved or deleted is announced on dxs_api_keys with its hash (not its use, `last_used_at`), and an
  // organisation renamed or deleted (whose id and name a checked key answers) with an empty payload, which
  // forgets every key.
  await sql`
    create function dxs_notify_api_key() returns trigger language plpgsql as $$
    begin
      if TG_TABLE_NAME = 'api_keys' then
        perform pg_notify('dxs_api_keys', old.key_hash);
      else
        perform pg_notify('dxs_api_keys', '');
      end if;
      return null;
    end
    $$`.execute(db)
  await sql`create trigger api_keys_notify after update of organization_id, key_hash, revoked_at or delete
    on api_keys for each row execute function dxs_notify_api_key()`.execute(db)
  await sql`create trigger organizations_notify_api_keys after update of id, name or delete
    on organizations for each row execute function dxs_notify_api_key()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger organizations_notify_api_keys on organizations`.execute(db)
  await sql`drop trigger api_keys_notify on api_keys`.execute(db)
  await sql`drop function dxs_notify_api_key()`.execute(db)
}
