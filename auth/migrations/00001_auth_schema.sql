-- The auth schema of Supabase Auth (GoTrue), limited to what external-provider sign-in uses. Column names and
-- types follow GoTrue's migrations so that SQL written against Supabase (policies, triggers on auth.users)
-- keeps working. Enumerations are text columns with CHECK constraints, which a later migration can widen
-- without ALTER TYPE.

-- +goose Up
CREATE TABLE auth.users (
    instance_id uuid,
    id uuid PRIMARY KEY,
    aud varchar(255),
    role varchar(255),
    email varchar(255),
    encrypted_password varchar(255) NOT NULL DEFAULT '',
    email_confirmed_at timestamptz,
    invited_at timestamptz,
    confirmation_sent_at timestamptz,
    recovery_sent_at timestamptz,
    email_change_sent_at timestamptz,
    last_sign_in_at timestamptz,
    raw_app_meta_data jsonb NOT NULL DEFAULT '{}',
    raw_user_meta_data jsonb NOT NULL DEFAULT '{}',
    is_super_admin boolean,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    phone text UNIQUE,
    phone_confirmed_at timestamptz,
    confirmed_at timestamptz GENERATED ALWAYS AS (LEAST(email_confirmed_at, phone_confirmed_at)) STORED,
    banned_until timestamptz,
    is_sso_user boolean NOT NULL DEFAULT false,
    deleted_at timestamptz,
    is_anonymous boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX users_email_partial_key ON auth.users (email) WHERE is_sso_user = false;

CREATE TABLE auth.identities (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    provider_id text NOT NULL,
    user_id uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    identity_data jsonb NOT NULL,
    provider text NOT NULL,
    last_sign_in_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    email text GENERATED ALWAYS AS (lower(identity_data ->> 'email')) STORED,
    CONSTRAINT identities_provider_id_provider_unique UNIQUE (provider_id, provider)
);
CREATE INDEX identities_user_id_idx ON auth.identities (user_id);
CREATE INDEX identities_email_idx ON auth.identities (email text_pattern_ops);

CREATE TABLE auth.sessions (
    id uuid PRIMARY KEY,
    user_id uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    factor_id uuid,
    aal text NOT NULL DEFAULT 'aal1' CHECK (aal IN ('aal1', 'aal2', 'aal3')),
    not_after timestamptz,
    refreshed_at timestamp,
    user_agent text,
    ip inet,
    tag text
);
CREATE INDEX sessions_user_id_idx ON auth.sessions (user_id);

CREATE TABLE auth.refresh_tokens (
    instance_id uuid,
    id bigserial PRIMARY KEY,
    token varchar(255) NOT NULL UNIQUE,
    user_id varchar(255) NOT NULL,
    revoked boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    parent varchar(255),
    session_id uuid NOT NULL REFERENCES auth.sessions (id) ON DELETE CASCADE
);
CREATE INDEX refresh_tokens_parent_idx ON auth.refresh_tokens (parent);
CREATE INDEX refresh_tokens_session_id_revoked_idx ON auth.refresh_tokens (session_id, revoked);

CREATE TABLE auth.mfa_amr_claims (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    session_id uuid NOT NULL REFERENCES auth.sessions (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    authentication_method text NOT NULL,
    CONSTRAINT mfa_amr_claims_session_id_authentication_method_pkey UNIQUE (session_id, authentication_method)
);

CREATE TABLE auth.flow_state (
    id uuid PRIMARY KEY,
    user_id uuid,
    auth_code text,
    code_challenge_method text CHECK (code_challenge_method IN ('s256', 'plain')),
    code_challenge text,
    provider_type text NOT NULL,
    provider_access_token text,
    provider_refresh_token text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    authentication_method text NOT NULL,
    auth_code_issued_at timestamptz,
    invite_token text,
    referrer text,
    oauth_client_state_id uuid,
    linking_target_id uuid,
    email_optional boolean NOT NULL DEFAULT false
);
CREATE INDEX idx_auth_code ON auth.flow_state (auth_code);
CREATE INDEX idx_user_id_auth_method ON auth.flow_state (user_id, authentication_method);
CREATE INDEX flow_state_created_at_idx ON auth.flow_state (created_at DESC);

CREATE TABLE auth.audit_log_entries (
    instance_id uuid,
    id uuid PRIMARY KEY,
    payload json,
    created_at timestamptz NOT NULL DEFAULT now(),
    ip_address varchar(64) NOT NULL DEFAULT ''
);

-- Settings changed through the management API. One row; version increases with every change so that every
-- server instance reading it sees the same configuration.
CREATE TABLE auth.pgreflect_config (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    settings jsonb NOT NULL DEFAULT '{}',
    version bigint NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO auth.pgreflect_config (id) VALUES (true);

-- Nothing here is for API roles: RLS without policies plus no grants keeps them out even if someone adds
-- the schema to the API's search path. The owner (the service) bypasses RLS.
ALTER TABLE auth.users ENABLE ROW LEVEL SECURITY;
ALTER TABLE auth.identities ENABLE ROW LEVEL SECURITY;
ALTER TABLE auth.sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE auth.refresh_tokens ENABLE ROW LEVEL SECURITY;
ALTER TABLE auth.mfa_amr_claims ENABLE ROW LEVEL SECURITY;
ALTER TABLE auth.flow_state ENABLE ROW LEVEL SECURITY;
ALTER TABLE auth.audit_log_entries ENABLE ROW LEVEL SECURITY;
ALTER TABLE auth.pgreflect_config ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON auth.users, auth.identities, auth.sessions, auth.refresh_tokens, auth.mfa_amr_claims,
    auth.flow_state, auth.audit_log_entries, auth.pgreflect_config FROM PUBLIC;

-- +goose Down
DROP TABLE auth.pgreflect_config;
DROP TABLE auth.audit_log_entries;
DROP TABLE auth.flow_state;
DROP TABLE auth.mfa_amr_claims;
DROP TABLE auth.refresh_tokens;
DROP TABLE auth.sessions;
DROP TABLE auth.identities;
DROP TABLE auth.users;
