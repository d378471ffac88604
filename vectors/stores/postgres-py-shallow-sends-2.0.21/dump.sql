--
-- PostgreSQL database dump
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: checkpoint_blobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoint_blobs (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    channel text NOT NULL,
    type text NOT NULL,
    blob bytea
);


--
-- Name: checkpoint_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoint_migrations (
    v integer NOT NULL
);


--
-- Name: checkpoint_writes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoint_writes (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    checkpoint_id text NOT NULL,
    task_id text NOT NULL,
    idx integer NOT NULL,
    channel text NOT NULL,
    type text,
    blob bytea NOT NULL,
    task_path text DEFAULT ''::text NOT NULL
);


--
-- Name: checkpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoints (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    type text,
    checkpoint jsonb NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL
);


--
-- Data for Name: checkpoint_blobs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoint_blobs VALUES ('t-sends', '', '__start__', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-sends', '', 'topics', 'msgpack', '\x92a57061726973a4726f6d65');
INSERT INTO public.checkpoint_blobs VALUES ('t-sends', '', 'results', 'msgpack', '\x92a9706c616e6e65642061a9706c616e6e65642062');
INSERT INTO public.checkpoint_blobs VALUES ('t-sends', '', 'branch:to:plan_b', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-sends', '', 'branch:to:plan_a', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-sends-done', '', '__start__', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-sends-done', '', 'topics', 'msgpack', '\x92a57061726973a4726f6d65');
INSERT INTO public.checkpoint_blobs VALUES ('t-sends-done', '', 'branch:to:plan_b', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-sends-done', '', 'branch:to:plan_a', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-sends-done', '', 'results', 'msgpack', '\x95a9706c616e6e65642061a9706c616e6e65642062a8613a207061726973a7613a20726f6d65aa623a2077656174686572');


--
-- Data for Name: checkpoint_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoint_migrations VALUES (0);
INSERT INTO public.checkpoint_migrations VALUES (1);
INSERT INTO public.checkpoint_migrations VALUES (2);
INSERT INTO public.checkpoint_migrations VALUES (3);
INSERT INTO public.checkpoint_migrations VALUES (4);
INSERT INTO public.checkpoint_migrations VALUES (5);
INSERT INTO public.checkpoint_migrations VALUES (6);
INSERT INTO public.checkpoint_migrations VALUES (7);


--
-- Data for Name: checkpoint_writes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoint_writes VALUES ('t-sends', '', '1f1eaf36-1fd7-62df-8000-97f393830838', 'b03feb2b-72ab-9750-1b26-34b230c14134', 0, 'results', 'msgpack', '\x91a9706c616e6e65642062', '~__pregel_pull, plan_b');
INSERT INTO public.checkpoint_writes VALUES ('t-sends', '', '1f1eaf36-1fd7-62df-8000-97f393830838', 'b03feb2b-72ab-9750-1b26-34b230c14134', 1, '__pregel_tasks', 'msgpack', '\xc7da0193af6c616e6767726170682e7479706573a453656e6492a8726573656172636883a5746f706963a777656174686572a46e6f7465c79e0594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74ad616e64207468652077696e643fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d32a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ea26279a162', '~__pregel_pull, plan_b');
INSERT INTO public.checkpoint_writes VALUES ('t-sends', '', '1f1eaf36-1fd7-62df-8000-97f393830838', '2c123acd-845d-6e2e-48e9-dfadecf130c1', 0, 'results', 'msgpack', '\x91a9706c616e6e65642061', '~__pregel_pull, plan_a');
INSERT INTO public.checkpoint_writes VALUES ('t-sends', '', '1f1eaf36-1fd7-62df-8000-97f393830838', '2c123acd-845d-6e2e-48e9-dfadecf130c1', 1, '__pregel_tasks', 'msgpack', '\xc7810193af6c616e6767726170682e7479706573a453656e6492a8726573656172636883a5746f706963a57061726973a861736b65645f6174c7430394a86461746574696d65a86461746574696d65d920323032342d30372d30315431323a33303a34352e3132333435362b30303a3030ad66726f6d69736f666f726d6174a26279a161', '~__pregel_pull, plan_a');
INSERT INTO public.checkpoint_writes VALUES ('t-sends', '', '1f1eaf36-1fd7-62df-8000-97f393830838', '2c123acd-845d-6e2e-48e9-dfadecf130c1', 2, '__pregel_tasks', 'msgpack', '\xc7800193af6c616e6767726170682e7479706573a453656e6492a8726573656172636883a5746f706963a4726f6d65a861736b65645f6174c7430394a86461746574696d65a86461746574696d65d920323032342d30372d30315431323a33303a34352e3132333435362b30303a3030ad66726f6d69736f666f726d6174a26279a161', '~__pregel_pull, plan_a');
INSERT INTO public.checkpoint_writes VALUES ('t-sends-done', '', '1f1eaf36-2026-683a-8001-2f5286f6a059', 'e7000ab9-9147-d489-c1de-31fd136577d8', 0, 'results', 'msgpack', '\x91a8613a207061726973', '~__pregel_push, 0000000000, 0000000000');
INSERT INTO public.checkpoint_writes VALUES ('t-sends-done', '', '1f1eaf36-2026-683a-8001-2f5286f6a059', '040f7aea-f125-160c-016b-12f9e5f105a0', 0, 'results', 'msgpack', '\x91a7613a20726f6d65', '~__pregel_push, 0000000001, 0000000000');
INSERT INTO public.checkpoint_writes VALUES ('t-sends-done', '', '1f1eaf36-2026-683a-8001-2f5286f6a059', '7d11a09a-1a10-b1f5-591b-711854233a0c', 0, 'results', 'msgpack', '\x91aa623a2077656174686572', '~__pregel_push, 0000000002, 0000000000');


--
-- Data for Name: checkpoints; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoints VALUES ('t-sends', '', NULL, '{"v": 3, "id": "1f1eaf36-1fef-64e8-8001-95efbc0a07b7", "ts": "2026-11-28T06:17:26.724691+00:00", "pending_sends": [], "versions_seen": {"plan_a": {"branch:to:plan_a": "00000000000000000000000000000002.0.5310560870598195"}, "plan_b": {"branch:to:plan_b": "00000000000000000000000000000002.0.4944712844614192"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.4943524574007929"}}, "channel_versions": {"topics": "00000000000000000000000000000002.0.2483945313125996", "results": "00000000000000000000000000000003.0.4326182099547051", "__start__": "00000000000000000000000000000002.0.020878579201067282", "branch:to:plan_a": "00000000000000000000000000000003.0.9114285252605765", "branch:to:plan_b": "00000000000000000000000000000003.0.6808980879567478"}}', '{"step": 1, "source": "loop", "writes": {"plan_a": {"results": ["planned a"]}, "plan_b": {"results": ["planned b"]}}, "parents": {}, "thread_id": "t-sends"}');
INSERT INTO public.checkpoints VALUES ('t-sends-done', '', NULL, '{"v": 3, "id": "1f1eaf36-2057-614d-8002-1679f6caf9ad", "ts": "2026-11-28T06:17:26.767210+00:00", "pending_sends": [], "versions_seen": {"plan_a": {"branch:to:plan_a": "00000000000000000000000000000002.0.8412217395193216"}, "plan_b": {"branch:to:plan_b": "00000000000000000000000000000002.0.24359325894628026"}, "research": {}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.2224218177955739"}, "__interrupt__": {"topics": "00000000000000000000000000000002.0.7536308833476105", "results": "00000000000000000000000000000003.0.9418742672912517", "__start__": "00000000000000000000000000000002.0.8503117456823914", "branch:to:plan_a": "00000000000000000000000000000003.0.17091234333742955", "branch:to:plan_b": "00000000000000000000000000000003.0.830705565404809"}}, "channel_versions": {"topics": "00000000000000000000000000000002.0.7536308833476105", "results": "00000000000000000000000000000004.0.03360345291278832", "__start__": "00000000000000000000000000000002.0.8503117456823914", "branch:to:plan_a": "00000000000000000000000000000003.0.17091234333742955", "branch:to:plan_b": "00000000000000000000000000000003.0.830705565404809"}}', '{"step": 2, "source": "loop", "writes": {"research": [{"results": ["a: paris"]}, {"results": ["a: rome"]}, {"results": ["b: weather"]}]}, "parents": {}, "thread_id": "t-sends-done"}');


--
-- Name: checkpoint_blobs checkpoint_blobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_blobs
    ADD CONSTRAINT checkpoint_blobs_pkey PRIMARY KEY (thread_id, checkpoint_ns, channel);


--
-- Name: checkpoint_migrations checkpoint_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_migrations
    ADD CONSTRAINT checkpoint_migrations_pkey PRIMARY KEY (v);


--
-- Name: checkpoint_writes checkpoint_writes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_writes
    ADD CONSTRAINT checkpoint_writes_pkey PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx);


--
-- Name: checkpoints checkpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoints
    ADD CONSTRAINT checkpoints_pkey PRIMARY KEY (thread_id, checkpoint_ns);


--
-- Name: checkpoint_blobs_thread_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX checkpoint_blobs_thread_id_idx ON public.checkpoint_blobs USING btree (thread_id);


--
-- Name: checkpoint_writes_thread_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX checkpoint_writes_thread_id_idx ON public.checkpoint_writes USING btree (thread_id);


--
-- Name: checkpoints_thread_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX checkpoints_thread_id_idx ON public.checkpoints USING btree (thread_id);


--
-- PostgreSQL database dump complete
--


