import { QueryClient } from "@tanstack/react-query";
import { ApiError } from "../lib/errors";

// Server state lives in this cache; screens read it through hooks.
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // Refusals and missing things do not get better by asking again.
      retry: (n, err) => n < 2 && !(err instanceof ApiError && err.status < 500),
      refetchOnWindowFocus: false,
    },
  },
});
