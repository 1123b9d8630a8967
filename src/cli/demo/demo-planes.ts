import { DEFAULT_API_KEY } from "../../control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../control-plane/server.js";

// The demo's two local control planes, as examples/environments/ names them: a hosted (SaaS) one
// that staging and prod share (staging's deployments carry the suffix -staging there) and a
// self-hosted one for onprem. Both in this process, in memory.

export type DemoPlanes = { hosted: RunningControlPlane; selfHosted: RunningControlPlane };

export async function startDemoPlanes(revisionSeconds: number): Promise<DemoPlanes> {
  const timing = { port: 0, revisionSeconds, runSeconds: 0.5, deploymentReadySeconds: 0.5 };
  const hosted = await startControlPlane({ ...timing, mode: "saas" });
  try {
    return { hosted, selfHosted: await startControlPlane({ ...timing, mode: "self-hosted" }) };
  } catch (error) {
    await hosted.stop();
    throw error;
  }
}

export async function stopDemoPlanes(planes: DemoPlanes): Promise<void> {
  await Promise.all([planes.hosted.stop(), planes.selfHosted.stop()]);
}

/**
 * The variables the examples' Environment documents read (api_url and api_key of each), and a demo
 * value for the secrets the agents read from the environment; nothing real leaves this machine.
 * PLUMB_* settings are dropped: every command here takes its Environment's.
 */
export function demoEnv(planes: DemoPlanes, inherited: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(inherited).filter(([key]) => !key.startsWith("PLUMB_")),
  );
  return {
    ...env,
    OPENAI_API_KEY: "sk-demo-not-a-real-key",
    // plumb-local-key is the local servers' documented development key, not a credential.
    SAAS_API_URL: planes.hosted.url,
    SAAS_API_KEY: DEFAULT_API_KEY,
    ONPREM_API_URL: planes.selfHosted.url,
    ONPREM_API_KEY: DEFAULT_API_KEY,
  };
}
