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
    version text NOT NULL,
    type text NOT NULL,
    blob bytea NOT NULL
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
    blob bytea NOT NULL
);


--
-- Name: checkpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoints (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    checkpoint_id text NOT NULL,
    parent_checkpoint_id text,
    type text,
    checkpoint jsonb NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL
);


--
-- Data for Name: checkpoint_blobs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', '__start__', '00000000000000000000000000000001.ed93bfeebc1d0d9578c587a3a3aaf62f', 'msgpack', '\x82a86d657373616765739183a474797065a568756d616ea7636f6e74656e74b15765617468657220696e2050617269733fa26964a3682d31a5737465707300');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'messages', '00000000000000000000000000000002.fcf88e34b7e6e00b022c2d63e89f3cee', 'msgpack', '\x9183a474797065a568756d616ea7636f6e74656e74b15765617468657220696e2050617269733fa26964a3682d31');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'steps', '00000000000000000000000000000002.93b885adfe0da089cdf634904fd59f71', 'msgpack', '\x00');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'start:agent', '00000000000000000000000000000002.2ddb81f12e54471a9ffaf25afbcbad16', 'msgpack', '\xa95f5f73746172745f5f');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'messages', '00000000000000000000000000000003.0e33001e625db2b541835c50d1e9654c', 'msgpack', '\x9283a474797065a568756d616ea7636f6e74656e74b15765617468657220696e2050617269733fa26964a3682d3184a474797065a26169a7636f6e74656e74a0a26964a461692d31aa746f6f6c5f63616c6c739183a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d31');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'steps', '00000000000000000000000000000003.55a54008ad1ba589aa210d2629c1df41', 'msgpack', '\x01');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'agent', '00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493', 'msgpack', '\xa56167656e74');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'when', '00000000000000000000000000000003.e6654da090ca1f4fd20d4751d5153e48', 'msgpack', '\xd920323032342d30372d30315431323a33303a34352e3132333435362b30303a3030');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'branch:agent:route:tools', '00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493', 'msgpack', '\xa56167656e74');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'messages', '00000000000000000000000000000004.a7e35b9dcecddbedb568213a11a74cbc', 'msgpack', '\x9383a474797065a568756d616ea7636f6e74656e74b15765617468657220696e2050617269733fa26964a3682d3184a474797065a26169a7636f6e74656e74a0a26964a461692d31aa746f6f6c5f63616c6c739183a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d3184a474797065a4746f6f6ca7636f6e74656e74a573756e6e79ac746f6f6c5f63616c6c5f6964a663616c6c2d31a26964a6746f6f6c2d31');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'tools', '00000000000000000000000000000004.187f75a896b7fd9210a3656bc9dc2b80', 'msgpack', '\xa5746f6f6c73');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'agent', '00000000000000000000000000000005.128b767ba9ed6014c0d2664a3275c493', 'msgpack', '\xa56167656e74');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'steps', '00000000000000000000000000000005.9e688c58a5487b8eaf69c9e1005ad0bf', 'msgpack', '\x02');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'messages', '00000000000000000000000000000005.64fe74fd5c2613f2e2445a88860a5ab1', 'msgpack', '\x9483a474797065a568756d616ea7636f6e74656e74b15765617468657220696e2050617269733fa26964a3682d3184a474797065a26169a7636f6e74656e74a0a26964a461692d31aa746f6f6c5f63616c6c739183a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d3184a474797065a4746f6f6ca7636f6e74656e74a573756e6e79ac746f6f6c5f63616c6c5f6964a663616c6c2d31a26964a6746f6f6c2d3184a474797065a26169a7636f6e74656e74b549742069732073756e6e7920696e2050617269732ea26964a461692d32aa746f6f6c5f63616c6c7390');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'branch:agent:route:after', '00000000000000000000000000000005.128b767ba9ed6014c0d2664a3275c493', 'msgpack', '\xa56167656e74');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'messages', '00000000000000000000000000000006.426765ffd8fded7a8dd014e3a652e9f0', 'msgpack', '\x9983a474797065a568756d616ea7636f6e74656e74b15765617468657220696e2050617269733fa26964a3682d3184a474797065a26169a7636f6e74656e74a0a26964a461692d31aa746f6f6c5f63616c6c739183a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d3184a474797065a4746f6f6ca7636f6e74656e74a573756e6e79ac746f6f6c5f63616c6c5f6964a663616c6c2d31a26964a6746f6f6c2d3184a474797065a26169a7636f6e74656e74b549742069732073756e6e7920696e2050617269732ea26964a461692d32aa746f6f6c5f63616c6c739083a474797065a568756d616ea7636f6e74656e74b15765617468657220696e2050617269733fa26964a3682d3184a474797065a26169a7636f6e74656e74a0a26964a461692d31aa746f6f6c5f63616c6c739183a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d3184a474797065a4746f6f6ca7636f6e74656e74a573756e6e79ac746f6f6c5f63616c6c5f6964a663616c6c2d31a26964a6746f6f6c2d3184a474797065a26169a7636f6e74656e74b549742069732073756e6e7920696e2050617269732ea26964a461692d32aa746f6f6c5f63616c6c739084a474797065a26169a7636f6e74656e74b7286e6f7465642062792074686520737562677261706829a26964a57375622d31aa746f6f6c5f63616c6c7390');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'after', '00000000000000000000000000000006.6e0fa44895c3376357b76f3dedd52f55', 'msgpack', '\xa56166746572');
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', '__start__', '00000000000000000000000000000001.ed93bfeebc1d0d9578c587a3a3aaf62f', 'msgpack', '\x82a86d657373616765739183a474797065a568756d616ea7636f6e74656e74b15765617468657220696e2050617269733fa26964a3682d31a5737465707300');
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', 'messages', '00000000000000000000000000000002.fcf88e34b7e6e00b022c2d63e89f3cee', 'msgpack', '\x9183a474797065a568756d616ea7636f6e74656e74b15765617468657220696e2050617269733fa26964a3682d31');
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', 'steps', '00000000000000000000000000000002.93b885adfe0da089cdf634904fd59f71', 'msgpack', '\x00');
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', 'start:agent', '00000000000000000000000000000002.2ddb81f12e54471a9ffaf25afbcbad16', 'msgpack', '\xa95f5f73746172745f5f');
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', 'messages', '00000000000000000000000000000003.0e33001e625db2b541835c50d1e9654c', 'msgpack', '\x9283a474797065a568756d616ea7636f6e74656e74b15765617468657220696e2050617269733fa26964a3682d3184a474797065a26169a7636f6e74656e74a0a26964a461692d31aa746f6f6c5f63616c6c739183a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d31');
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', 'steps', '00000000000000000000000000000003.55a54008ad1ba589aa210d2629c1df41', 'msgpack', '\x01');
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', 'agent', '00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493', 'msgpack', '\xa56167656e74');
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', 'when', '00000000000000000000000000000003.e6654da090ca1f4fd20d4751d5153e48', 'msgpack', '\xd920323032342d30372d30315431323a33303a34352e3132333435362b30303a3030');
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', 'branch:agent:route:tools', '00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493', 'msgpack', '\xa56167656e74');


--
-- Data for Name: checkpoint_writes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fa8-61cf-bfff-1846902d20a5', '2d7e353b-7dfa-5552-ab63-cc9d2ecb65fd', 0, 'messages', 'msgpack', '\x9183a474797065a568756d616ea7636f6e74656e74b15765617468657220696e2050617269733fa26964a3682d31');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fa8-61cf-bfff-1846902d20a5', '2d7e353b-7dfa-5552-ab63-cc9d2ecb65fd', 1, 'steps', 'msgpack', '\x00');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fa8-61cf-bfff-1846902d20a5', '2d7e353b-7dfa-5552-ab63-cc9d2ecb65fd', 2, 'start:agent', 'msgpack', '\xa95f5f73746172745f5f');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fb0-6e9d-8000-8a3c44f9e5a3', 'efe7e24c-4872-5c20-812c-b3d9fb72ee86', 0, 'agent', 'msgpack', '\xa56167656e74');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fb0-6e9d-8000-8a3c44f9e5a3', 'efe7e24c-4872-5c20-812c-b3d9fb72ee86', 1, 'messages', 'msgpack', '\x9184a474797065a26169a7636f6e74656e74a0a26964a461692d31aa746f6f6c5f63616c6c739183a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d31');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fb0-6e9d-8000-8a3c44f9e5a3', 'efe7e24c-4872-5c20-812c-b3d9fb72ee86', 2, 'when', 'msgpack', '\xd920323032342d30372d30315431323a33303a34352e3132333435362b30303a3030');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fb0-6e9d-8000-8a3c44f9e5a3', 'efe7e24c-4872-5c20-812c-b3d9fb72ee86', 3, 'steps', 'msgpack', '\x01');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fb0-6e9d-8000-8a3c44f9e5a3', 'efe7e24c-4872-5c20-812c-b3d9fb72ee86', 4, 'branch:agent:route:tools', 'msgpack', '\xa56167656e74');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fc1-6ceb-8001-81452430ea85', '9fa80943-97aa-58ab-a09e-5c3038d96572', 0, 'tools', 'msgpack', '\xa5746f6f6c73');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fc1-6ceb-8001-81452430ea85', '9fa80943-97aa-58ab-a09e-5c3038d96572', 1, 'messages', 'msgpack', '\x9184a474797065a4746f6f6ca7636f6e74656e74a573756e6e79ac746f6f6c5f63616c6c5f6964a663616c6c2d31a26964a6746f6f6c2d31');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fcd-6cf4-8002-c59340a770e8', 'bcd40af9-e726-52e0-84a9-f5614d0bde71', 0, 'agent', 'msgpack', '\xa56167656e74');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fcd-6cf4-8002-c59340a770e8', 'bcd40af9-e726-52e0-84a9-f5614d0bde71', 1, 'messages', 'msgpack', '\x9184a474797065a26169a7636f6e74656e74b549742069732073756e6e7920696e2050617269732ea26964a461692d32aa746f6f6c5f63616c6c7390');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fcd-6cf4-8002-c59340a770e8', 'bcd40af9-e726-52e0-84a9-f5614d0bde71', 2, 'steps', 'msgpack', '\x02');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fcd-6cf4-8002-c59340a770e8', 'bcd40af9-e726-52e0-84a9-f5614d0bde71', 3, 'branch:agent:route:after', 'msgpack', '\xa56167656e74');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fd2-6813-8003-f97e8f9eb940', 'ef624e75-da0f-5801-b701-1277ca583de7', 0, 'after', 'msgpack', '\xa56166746572');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1e8dab-4fd2-6813-8003-f97e8f9eb940', 'ef624e75-da0f-5801-b701-1277ca583de7', 1, 'messages', 'msgpack', '\x9583a474797065a568756d616ea7636f6e74656e74b15765617468657220696e2050617269733fa26964a3682d3184a474797065a26169a7636f6e74656e74a0a26964a461692d31aa746f6f6c5f63616c6c739183a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d3184a474797065a4746f6f6ca7636f6e74656e74a573756e6e79ac746f6f6c5f63616c6c5f6964a663616c6c2d31a26964a6746f6f6c2d3184a474797065a26169a7636f6e74656e74b549742069732073756e6e7920696e2050617269732ea26964a461692d32aa746f6f6c5f63616c6c739084a474797065a26169a7636f6e74656e74b7286e6f7465642062792074686520737562677261706829a26964a57375622d31aa746f6f6c5f63616c6c7390');
INSERT INTO public.checkpoint_writes VALUES ('t-short', '', '1f1e8dab-4fe9-6cb9-bfff-5d258813fcdb', 'de0352f6-9a62-54d1-889e-41a4eae24dfa', 0, 'messages', 'msgpack', '\x9183a474797065a568756d616ea7636f6e74656e74b15765617468657220696e2050617269733fa26964a3682d31');
INSERT INTO public.checkpoint_writes VALUES ('t-short', '', '1f1e8dab-4fe9-6cb9-bfff-5d258813fcdb', 'de0352f6-9a62-54d1-889e-41a4eae24dfa', 1, 'steps', 'msgpack', '\x00');
INSERT INTO public.checkpoint_writes VALUES ('t-short', '', '1f1e8dab-4fe9-6cb9-bfff-5d258813fcdb', 'de0352f6-9a62-54d1-889e-41a4eae24dfa', 2, 'start:agent', 'msgpack', '\xa95f5f73746172745f5f');
INSERT INTO public.checkpoint_writes VALUES ('t-short', '', '1f1e8dab-4fed-608b-8000-af05bb3e6512', '2a930c20-f1a6-56d0-a2ec-9cca82d592de', 0, 'agent', 'msgpack', '\xa56167656e74');
INSERT INTO public.checkpoint_writes VALUES ('t-short', '', '1f1e8dab-4fed-608b-8000-af05bb3e6512', '2a930c20-f1a6-56d0-a2ec-9cca82d592de', 1, 'messages', 'msgpack', '\x9184a474797065a26169a7636f6e74656e74a0a26964a461692d31aa746f6f6c5f63616c6c739183a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d31');
INSERT INTO public.checkpoint_writes VALUES ('t-short', '', '1f1e8dab-4fed-608b-8000-af05bb3e6512', '2a930c20-f1a6-56d0-a2ec-9cca82d592de', 2, 'when', 'msgpack', '\xd920323032342d30372d30315431323a33303a34352e3132333435362b30303a3030');
INSERT INTO public.checkpoint_writes VALUES ('t-short', '', '1f1e8dab-4fed-608b-8000-af05bb3e6512', '2a930c20-f1a6-56d0-a2ec-9cca82d592de', 3, 'steps', 'msgpack', '\x01');
INSERT INTO public.checkpoint_writes VALUES ('t-short', '', '1f1e8dab-4fed-608b-8000-af05bb3e6512', '2a930c20-f1a6-56d0-a2ec-9cca82d592de', 4, 'branch:agent:route:tools', 'msgpack', '\xa56167656e74');


--
-- Data for Name: checkpoints; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoints VALUES ('t-main', '', '1f1e8dab-4fa8-61cf-bfff-1846902d20a5', NULL, NULL, '{"v": 1, "id": "1f1e8dab-4fa8-61cf-bfff-1846902d20a5", "ts": "2026-11-25T14:15:46.202659+00:00", "pending_sends": ["msgpack", "kA=="], "versions_seen": {"__input__": {}}, "channel_versions": {"__start__": "00000000000000000000000000000001.ed93bfeebc1d0d9578c587a3a3aaf62f"}}', '{"step": -1, "source": "input", "writes": {"steps": 0, "messages": [{"id": "h-1", "type": "human", "content": "Weather in Paris?"}]}}');
INSERT INTO public.checkpoints VALUES ('t-main', '', '1f1e8dab-4fb0-6e9d-8000-8a3c44f9e5a3', '1f1e8dab-4fa8-61cf-bfff-1846902d20a5', NULL, '{"v": 1, "id": "1f1e8dab-4fb0-6e9d-8000-8a3c44f9e5a3", "ts": "2026-11-25T14:15:46.206251+00:00", "pending_sends": ["msgpack", "kA=="], "versions_seen": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.ed93bfeebc1d0d9578c587a3a3aaf62f"}}, "channel_versions": {"steps": "00000000000000000000000000000002.93b885adfe0da089cdf634904fd59f71", "messages": "00000000000000000000000000000002.fcf88e34b7e6e00b022c2d63e89f3cee", "__start__": "00000000000000000000000000000002.", "start:agent": "00000000000000000000000000000002.2ddb81f12e54471a9ffaf25afbcbad16"}}', '{"step": 0, "source": "loop", "writes": null}');
INSERT INTO public.checkpoints VALUES ('t-main', '', '1f1e8dab-4fc1-6ceb-8001-81452430ea85', '1f1e8dab-4fb0-6e9d-8000-8a3c44f9e5a3', NULL, '{"v": 1, "id": "1f1e8dab-4fc1-6ceb-8001-81452430ea85", "ts": "2026-11-25T14:15:46.213173+00:00", "pending_sends": ["msgpack", "kA=="], "versions_seen": {"agent": {"start:agent": "00000000000000000000000000000002.2ddb81f12e54471a9ffaf25afbcbad16"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.ed93bfeebc1d0d9578c587a3a3aaf62f"}}, "channel_versions": {"when": "00000000000000000000000000000003.e6654da090ca1f4fd20d4751d5153e48", "agent": "00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493", "steps": "00000000000000000000000000000003.55a54008ad1ba589aa210d2629c1df41", "messages": "00000000000000000000000000000003.0e33001e625db2b541835c50d1e9654c", "__start__": "00000000000000000000000000000002.", "start:agent": "00000000000000000000000000000003.", "branch:agent:route:tools": "00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493"}}', '{"step": 1, "source": "loop", "writes": {"agent": {"when": "2024-07-01T12:30:45.123456+00:00", "steps": 1, "messages": [{"id": "ai-1", "type": "ai", "content": "", "tool_calls": [{"id": "call-1", "args": {"city": "Paris"}, "name": "weather"}]}]}}}');
INSERT INTO public.checkpoints VALUES ('t-main', '', '1f1e8dab-4fcd-6cf4-8002-c59340a770e8', '1f1e8dab-4fc1-6ceb-8001-81452430ea85', NULL, '{"v": 1, "id": "1f1e8dab-4fcd-6cf4-8002-c59340a770e8", "ts": "2026-11-25T14:15:46.218096+00:00", "pending_sends": ["msgpack", "kA=="], "versions_seen": {"agent": {"start:agent": "00000000000000000000000000000002.2ddb81f12e54471a9ffaf25afbcbad16"}, "tools": {"branch:agent:route:tools": "00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.ed93bfeebc1d0d9578c587a3a3aaf62f"}, "__interrupt__": {"when": "00000000000000000000000000000003.e6654da090ca1f4fd20d4751d5153e48", "agent": "00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493", "steps": "00000000000000000000000000000003.55a54008ad1ba589aa210d2629c1df41", "messages": "00000000000000000000000000000003.0e33001e625db2b541835c50d1e9654c", "__start__": "00000000000000000000000000000002.", "start:agent": "00000000000000000000000000000003.", "branch:agent:route:tools": "00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493"}}, "channel_versions": {"when": "00000000000000000000000000000003.e6654da090ca1f4fd20d4751d5153e48", "agent": "00000000000000000000000000000004.", "steps": "00000000000000000000000000000003.55a54008ad1ba589aa210d2629c1df41", "tools": "00000000000000000000000000000004.187f75a896b7fd9210a3656bc9dc2b80", "messages": "00000000000000000000000000000004.a7e35b9dcecddbedb568213a11a74cbc", "__start__": "00000000000000000000000000000002.", "start:agent": "00000000000000000000000000000003.", "branch:agent:route:tools": "00000000000000000000000000000004."}}', '{"step": 2, "source": "loop", "writes": {"tools": {"messages": [{"id": "tool-1", "type": "tool", "content": "sunny", "tool_call_id": "call-1"}]}}}');
INSERT INTO public.checkpoints VALUES ('t-main', '', '1f1e8dab-4fd2-6813-8003-f97e8f9eb940', '1f1e8dab-4fcd-6cf4-8002-c59340a770e8', NULL, '{"v": 1, "id": "1f1e8dab-4fd2-6813-8003-f97e8f9eb940", "ts": "2026-11-25T14:15:46.220022+00:00", "pending_sends": ["msgpack", "kA=="], "versions_seen": {"agent": {"tools": "00000000000000000000000000000004.187f75a896b7fd9210a3656bc9dc2b80", "start:agent": "00000000000000000000000000000002.2ddb81f12e54471a9ffaf25afbcbad16"}, "tools": {"branch:agent:route:tools": "00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.ed93bfeebc1d0d9578c587a3a3aaf62f"}, "__interrupt__": {"when": "00000000000000000000000000000003.e6654da090ca1f4fd20d4751d5153e48", "agent": "00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493", "steps": "00000000000000000000000000000003.55a54008ad1ba589aa210d2629c1df41", "messages": "00000000000000000000000000000003.0e33001e625db2b541835c50d1e9654c", "__start__": "00000000000000000000000000000002.", "start:agent": "00000000000000000000000000000003.", "branch:agent:route:tools": "00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493"}}, "channel_versions": {"when": "00000000000000000000000000000003.e6654da090ca1f4fd20d4751d5153e48", "agent": "00000000000000000000000000000005.128b767ba9ed6014c0d2664a3275c493", "steps": "00000000000000000000000000000005.9e688c58a5487b8eaf69c9e1005ad0bf", "tools": "00000000000000000000000000000005.", "messages": "00000000000000000000000000000005.64fe74fd5c2613f2e2445a88860a5ab1", "__start__": "00000000000000000000000000000002.", "start:agent": "00000000000000000000000000000003.", "branch:agent:route:after": "00000000000000000000000000000005.128b767ba9ed6014c0d2664a3275c493", "branch:agent:route:tools": "00000000000000000000000000000004."}}', '{"step": 3, "source": "loop", "writes": {"agent": {"steps": 2, "messages": [{"id": "ai-2", "type": "ai", "content": "It is sunny in Paris.", "tool_calls": []}]}}}');
INSERT INTO public.checkpoints VALUES ('t-main', '', '1f1e8dab-4fe0-6d79-8004-13fb1ac219a9', '1f1e8dab-4fd2-6813-8003-f97e8f9eb940', NULL, '{"v": 1, "id": "1f1e8dab-4fe0-6d79-8004-13fb1ac219a9", "ts": "2026-11-25T14:15:46.225888+00:00", "pending_sends": ["msgpack", "kA=="], "versions_seen": {"after": {"branch:agent:route:after": "00000000000000000000000000000005.128b767ba9ed6014c0d2664a3275c493"}, "agent": {"tools": "00000000000000000000000000000004.187f75a896b7fd9210a3656bc9dc2b80", "start:agent": "00000000000000000000000000000002.2ddb81f12e54471a9ffaf25afbcbad16"}, "tools": {"branch:agent:route:tools": "00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.ed93bfeebc1d0d9578c587a3a3aaf62f"}, "__interrupt__": {"when": "00000000000000000000000000000003.e6654da090ca1f4fd20d4751d5153e48", "agent": "00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493", "steps": "00000000000000000000000000000003.55a54008ad1ba589aa210d2629c1df41", "messages": "00000000000000000000000000000003.0e33001e625db2b541835c50d1e9654c", "__start__": "00000000000000000000000000000002.", "start:agent": "00000000000000000000000000000003.", "branch:agent:route:tools": "00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493"}}, "channel_versions": {"when": "00000000000000000000000000000003.e6654da090ca1f4fd20d4751d5153e48", "after": "00000000000000000000000000000006.6e0fa44895c3376357b76f3dedd52f55", "agent": "00000000000000000000000000000006.", "steps": "00000000000000000000000000000005.9e688c58a5487b8eaf69c9e1005ad0bf", "tools": "00000000000000000000000000000005.", "messages": "00000000000000000000000000000006.426765ffd8fded7a8dd014e3a652e9f0", "__start__": "00000000000000000000000000000002.", "start:agent": "00000000000000000000000000000003.", "branch:agent:route:after": "00000000000000000000000000000006.", "branch:agent:route:tools": "00000000000000000000000000000004."}}', '{"step": 4, "source": "loop", "writes": {"after": {"messages": [{"id": "h-1", "type": "human", "content": "Weather in Paris?"}, {"id": "ai-1", "type": "ai", "content": "", "tool_calls": [{"id": "call-1", "args": {"city": "Paris"}, "name": "weather"}]}, {"id": "tool-1", "type": "tool", "content": "sunny", "tool_call_id": "call-1"}, {"id": "ai-2", "type": "ai", "content": "It is sunny in Paris.", "tool_calls": []}, {"id": "sub-1", "type": "ai", "content": "(noted by the subgraph)", "tool_calls": []}]}}}');
INSERT INTO public.checkpoints VALUES ('t-short', '', '1f1e8dab-4fe9-6cb9-bfff-5d258813fcdb', NULL, NULL, '{"v": 1, "id": "1f1e8dab-4fe9-6cb9-bfff-5d258813fcdb", "ts": "2026-11-25T14:15:46.229569+00:00", "pending_sends": ["msgpack", "kA=="], "versions_seen": {"__input__": {}}, "channel_versions": {"__start__": "00000000000000000000000000000001.ed93bfeebc1d0d9578c587a3a3aaf62f"}}', '{"step": -1, "source": "input", "writes": {"steps": 0, "messages": [{"id": "h-1", "type": "human", "content": "Weather in Paris?"}]}}');
INSERT INTO public.checkpoints VALUES ('t-short', '', '1f1e8dab-4fed-608b-8000-af05bb3e6512', '1f1e8dab-4fe9-6cb9-bfff-5d258813fcdb', NULL, '{"v": 1, "id": "1f1e8dab-4fed-608b-8000-af05bb3e6512", "ts": "2026-11-25T14:15:46.230888+00:00", "pending_sends": ["msgpack", "kA=="], "versions_seen": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.ed93bfeebc1d0d9578c587a3a3aaf62f"}}, "channel_versions": {"steps": "00000000000000000000000000000002.93b885adfe0da089cdf634904fd59f71", "messages": "00000000000000000000000000000002.fcf88e34b7e6e00b022c2d63e89f3cee", "__start__": "00000000000000000000000000000002.", "start:agent": "00000000000000000000000000000002.2ddb81f12e54471a9ffaf25afbcbad16"}}', '{"step": 0, "source": "loop", "writes": null}');
INSERT INTO public.checkpoints VALUES ('t-short', '', '1f1e8dab-4ff1-6416-8001-dc9f36e4433d', '1f1e8dab-4fed-608b-8000-af05bb3e6512', NULL, '{"v": 1, "id": "1f1e8dab-4ff1-6416-8001-dc9f36e4433d", "ts": "2026-11-25T14:15:46.232622+00:00", "pending_sends": ["msgpack", "kA=="], "versions_seen": {"agent": {"start:agent": "00000000000000000000000000000002.2ddb81f12e54471a9ffaf25afbcbad16"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.ed93bfeebc1d0d9578c587a3a3aaf62f"}}, "channel_versions": {"when": "00000000000000000000000000000003.e6654da090ca1f4fd20d4751d5153e48", "agent": "00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493", "steps": "00000000000000000000000000000003.55a54008ad1ba589aa210d2629c1df41", "messages": "00000000000000000000000000000003.0e33001e625db2b541835c50d1e9654c", "__start__": "00000000000000000000000000000002.", "start:agent": "00000000000000000000000000000003.", "branch:agent:route:tools": "00000000000000000000000000000003.128b767ba9ed6014c0d2664a3275c493"}}', '{"step": 1, "source": "loop", "writes": {"agent": {"when": "2024-07-01T12:30:45.123456+00:00", "steps": 1, "messages": [{"id": "ai-1", "type": "ai", "content": "", "tool_calls": [{"id": "call-1", "args": {"city": "Paris"}, "name": "weather"}]}]}}}');


--
-- Name: checkpoint_blobs checkpoint_blobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_blobs
    ADD CONSTRAINT checkpoint_blobs_pkey PRIMARY KEY (thread_id, checkpoint_ns, channel, version);


--
-- Name: checkpoint_writes checkpoint_writes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_writes
    ADD CONSTRAINT checkpoint_writes_pkey PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx);


--
-- Name: checkpoints checkpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoints
    ADD CONSTRAINT checkpoints_pkey PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id);


--
-- PostgreSQL database dump complete
--


