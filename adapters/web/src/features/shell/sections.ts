// The sections of the CMS's navigation. Each later part of the CMS
// (media, push, audiences, loyalty, users, operations) adds its entry
// here and its routes in app/router.tsx.
import { IconBox, IconChartBar, IconPhoto, IconTemplate, type Icon } from "@tabler/icons-react";

export interface Section {
  label: string;
  /** The path: relative ones are under the current app (/apps/:appId/...). */
  to: string;
  perApp: boolean;
  icon: Icon;
  /** Only administrators see it. */
  adminOnly?: boolean;
}

export const sections: Section[] = [
  { label: "Content", to: "modules", perApp: true, icon: IconBox },
  { label: "Media", to: "media", perApp: true, icon: IconPhoto },
  { label: "Activity", to: "activity", perApp: true, icon: IconChartBar },
  { label: "Module types", to: "/module-types", perApp: false, icon: IconTemplate },
];
