import { Center, Loader } from "@mantine/core";

export function PageLoader({ label = "Loading" }: { label?: string }) {
  return (
    <Center py="xl">
      <Loader aria-label={label} />
    </Center>
  );
}
