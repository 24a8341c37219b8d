import { Alert, Button, Center, Paper, PasswordInput, Stack, TextInput, Title } from "@mantine/core";
import { useState, type FormEvent } from "react";
import { useNavigate, useSearchParams } from "react-router";
import * as session from "../../auth/session";
import { queryClient } from "../../app/queryClient";
import { ApiError, describe } from "../../lib/errors";

/** What a refused sign-in means, in words (the API's message says the rest). */
function refusal(err: unknown): { title: string; message: string } {
  if (err instanceof ApiError) {
    if (err.status === 401) return { title: "Wrong username or password", message: err.message };
    if (err.status === 403) return { title: "Sign-in refused from this address", message: err.message };
    if (err.status === 429) return { title: "Too many attempts", message: describe(err) };
  }
  return { title: "Could not sign in", message: describe(err) };
}

export function SignInPage() {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ title: string; message: string } | null>(null);
  const navigate = useNavigate();
  const [params] = useSearchParams();

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await session.signIn(username, password);
      queryClient.clear();
      const next = params.get("next");
      navigate(next && next.startsWith("/") && !next.startsWith("//") ? next : "/", { replace: true });
    } catch (err) {
      setError(refusal(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Center component="main" mih="100vh" bg="gray.1" p="md">
      <Paper component="form" onSubmit={submit} withBorder shadow="sm" p="xl" w={380} maw="100%" aria-labelledby="sign-in-title">
        <Stack>
          <Title order={1} size="h2" id="sign-in-title">
            HALO CMS
          </Title>
          {error && (
            <Alert color="red" title={error.title} role="alert">
              {error.message}
            </Alert>
          )}
          <TextInput label="Username" autoComplete="username" required value={username} onChange={(e) => setUsername(e.currentTarget.value)} autoFocus />
          <PasswordInput label="Password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
          <Button type="submit" loading={busy}>
            Sign in
          </Button>
        </Stack>
      </Paper>
    </Center>
  );
}
